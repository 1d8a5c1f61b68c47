// E2E_ALLOW_SKIP=<scenario>[,<scenario>…] names the e2e scenarios that may be skipped on a machine
// that cannot run them (not root, a build tool missing). Without it such a scenario FAILS with the
// reason: a skip nobody asked for would hide that the only proof of what it covers never ran. CI never
// sets it.

/** Whether E2E_ALLOW_SKIP names `scenario`. */
function skipAllowed(scenario: string): boolean {
  return (process.env['E2E_ALLOW_SKIP'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .includes(scenario);
}

/**
 * Whether to skip a scenario whose prerequisite is `missing` (undefined: nothing missing): only when
 * E2E_ALLOW_SKIP names it, and then the reason is printed. Otherwise the scenario runs, and
 * `assertPrerequisite` in its beforeAll fails it.
 */
export function skipScenario(scenario: string, missing: string | undefined): boolean {
  if (missing === undefined || !skipAllowed(scenario)) return false;
  process.stderr.write(`[e2e] ${scenario} scenario skipped (E2E_ALLOW_SKIP=${scenario}): ${missing}\n`);
  return true;
}

/** Fails a scenario that cannot run here, naming what is missing and the variable that skips it. */
export function assertPrerequisite(scenario: string, missing: string | undefined): void {
  if (missing === undefined) return;
  throw new Error(
    `the ${scenario} scenario cannot run here: ${missing}. ` +
      `E2E_ALLOW_SKIP=${scenario} skips it instead (CI never sets it).`,
  );
}
