/**
 * @module `npm test`'s static checks (`npm run check`): the npm scripts named on the command line —
 * the linter, the formatter check and the type checker — run at once instead of one after another.
 * Each is one busy thread: on two cores they end in the time of the longest, and on a loaded
 * machine three processes get three shares of the CPU, not one. Each one's output is printed whole
 * when it ends; the exit status is 1 if any failed. Node.js 24 runs this file as it is (type
 * stripping), as every npm script does.
 */
import { spawn } from 'node:child_process';

interface Outcome {
  readonly script: string;
  readonly code: number | null;
  readonly output: string;
}

function run(script: string): Promise<Outcome> {
  const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ script, code, output }));
  });
}

const scripts = process.argv.slice(2);
const outcomes = await Promise.all(
  scripts.map(async (script) => {
    const outcome = await run(script);
    const status = outcome.code === 0 ? 'passed' : `failed (exit ${outcome.code})`;
    process.stdout.write(`> npm run ${script}: ${status}\n${outcome.output}`);
    return outcome;
  }),
);
if (outcomes.some((outcome) => outcome.code !== 0)) process.exitCode = 1;
