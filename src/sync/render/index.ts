export { renderChain, type RenderInput, type RenderResult, type RenderedNode, type RenderedObject } from './render.js';
