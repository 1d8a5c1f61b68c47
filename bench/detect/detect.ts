/**
 * @module Agent detection cost, in a fresh process: the addon's load time (dlopen of the `.node`
 * file), then `detect()` against the fake NVML with 8 cards, in this process; then
 * `detectIsolated()` of all nine manufacturers (what the agent and `detect` run: a child process
 * per call) from the compiled `dist/` (`npm run bench` builds it; the sources would start the
 * child through tsx), timed and with its CPU (this process's and its children's). The parent sets
 * the environment (`GPUSTACK_NVIDIA_LIBRARY`, `GPUSTACK_FAKE_DEVICES`, …) before this process starts.
 * Usage: `node --import tsx bench/detect/detect.ts <calls> <warm-up> <out.json> [<isolated calls>]`
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import { _loadAddon, addonCandidates, detect, type detectIsolated as DetectIsolated } from '../../native/index.js';

const [callsText = '200', warmText = '20', out, isolatedText = '0'] = process.argv.slice(2);
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
/** CPU ms of this process's children that have been waited for (/proc/self/stat cutime + cstime, 100 Hz ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const isolated: { times: number[]; cpuMs: number[] } = { times: [], cpuMs: [] };
const built = new URL('../../dist/native/index.js', import.meta.url);
if (Number(isolatedText) > 0 && existsSync(built)) {
  const { detectIsolated } = (await import(built.href)) as { detectIsolated: typeof DetectIsolated };
  for (let i = 0; i < 2 + Number(isolatedText); i++) {
    const [started, cpu, childCpu] = [performance.now(), process.cpuUsage(), childrenCpuMs()];
    const result = await detectIsolated();
    const elapsed = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (result.devices.length !== devices) throw new Error(`detectIsolated found ${result.devices.length} cards`);
    if (i < 2) continue;
    isolated.times.push(elapsed);
    isolated.cpuMs.push((used.user + used.system) / 1000 + childrenCpuMs() - childCpu);
  }
}
const answer = JSON.stringify({ loadMs, devices, times, isolated });
if (out) writeFileSync(out, answer);
else process.stdout.write(`${answer}\n`);
