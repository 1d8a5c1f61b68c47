/** One line of the e2e run's story on stderr, `[e2e] …` (E2E_QUIET=1 silences it). */
export function log(message: string): void {
  if (process.env.E2E_QUIET !== '1') process.stderr.write(`[e2e] ${message}\n`);
}
