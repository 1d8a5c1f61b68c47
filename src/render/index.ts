export {
  renderChain,
  type RenderInput,
  type RenderResult,
  type RenderedNode,
  type RenderedObject,
  type RenderedSkip,
} from './render.js';
