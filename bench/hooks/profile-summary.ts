/**
 * @module Summarises a `.cpuprofile`: self time per function (top 30), and the share of time under
 * each function named on the command line (inclusive). `--under=<fn>` limits the self-time table to
 * samples under that function. `tsx bench/hooks/profile-summary.ts <file> [--under=fn] [fn…]`
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const args = process.argv.slice(2);
const under = args.find((a) => a.startsWith('--under='))?.slice('--under='.length);
const [file, ...focus] = args.filter((a) => !a.startsWith('--under='));
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [function…]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const isUnder = (id: number, name: string): boolean => {
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    if ((byId.get(cur) as ProfileNode).callFrame.functionName === name) return true;
  }
  return false;
};
const self = new Map<number, number>();
profile.samples.forEach((id, i) => {
  if (under === undefined || isUnder(id, under)) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const selfByLabel = new Map<string, number>();
for (const [id, us] of self) {
  const key = label(byId.get(id) as ProfileNode);
  selfByLabel.set(key, (selfByLabel.get(key) ?? 0) + us);
}
const pct = (us: number) =>
  `${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms`;
process.stdout.write(`total ${(total / 1000).toFixed(0)} ms${under ? ` under ${under}` : ''}\nself time:\n`);
for (const [key, us] of [...selfByLabel].sort((a, b) => b[1] - a[1]).slice(0, 30))
  process.stdout.write(`  ${pct(us)}  ${key}\n`);
for (const name of focus) {
  let inclusive = 0;
  for (const [id, us] of self) if (isUnder(id, name)) inclusive += us;
  process.stdout.write(`under ${name}: ${pct(inclusive)}\n`);
}
