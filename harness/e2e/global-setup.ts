// Builds every upstream component the e2e files use in one build-components.sh run before the
// first file starts, so that on a cold cache they compile side by side on the shared Go build
// cache (the files run one after another and would otherwise each build their own, in turn).
// Cached components cost nothing; a component given as E2E_<NAME>_BIN is not built; kubelet,
// containerd and runc only where their scenario can run (root; elsewhere it fails, or is skipped
// with E2E_ALLOW_SKIP=kubelet). Then, as root, the operator's image from the Dockerfile
// (scripts/e2e/build-image.sh, for image.e2e.test.ts). A build failure is not fatal here: the file
// that needs the component or the image reports it, with the build's own error.
import { spawnSync } from 'node:child_process';

import { BUILD_SCRIPT, COMPONENT_NAMES, envName, type ComponentName } from './components.js';
import { IMAGE_SCRIPT } from './image.js';

const NODE_SIDE: readonly ComponentName[] = ['kubelet', 'containerd', 'runc'];

export default function setup(): void {
  if (process.env['E2E_NO_BUILD'] === '1') return;
  const wanted = COMPONENT_NAMES.filter(
    (name) => !process.env[`E2E_${envName(name)}_BIN`] && (process.getuid?.() === 0 || !NODE_SIDE.includes(name)),
  );
  spawnSync('bash', [BUILD_SCRIPT, ...wanted], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (process.getuid?.() === 0) spawnSync('bash', [IMAGE_SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] });
}
