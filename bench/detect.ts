/**
 * @module Agent detection cost, in a fresh process: the addon's load time (dlopen of the `.node`
 * file), then `detect()` against the fake NVML with 8 cards. The parent sets the environment
 * (`GPUSTACK_NVIDIA_LIBRARY`, `GPUSTACK_FAKE_DEVICES`, …) before this process starts.
 * Usage: `node --import tsx bench/detect.ts <calls> <warm-up> <out.json>`
 */
import { writeFileSync } from 'node:fs';

import { _loadAddon, addonCandidates, detect } from '../native/index.js';

const [callsText = '200', warmText = '20', out] = process.argv.slice(2);
const loadStarted = performance.now();
_loadAddon(addonCandidates());
const loadMs = performance.now() - loadStarted;
const times: number[] = [];
let devices = 0;
for (let i = 0; i < Number(warmText) + Number(callsText); i++) {
  const started = performance.now();
  const result = await detect({ manufacturers: ['nvidia'] });
  const elapsed = performance.now() - started;
  if (result.errors.length > 0) throw new Error(`detect reported errors: ${JSON.stringify(result.errors)}`);
  devices = result.devices.length;
  if (i >= Number(warmText)) times.push(elapsed);
}
const answer = JSON.stringify({ loadMs, devices, times });
if (out) writeFileSync(out, answer);
else process.stdout.write(`${answer}\n`);
