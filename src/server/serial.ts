/** @module One-at-a-time processing of big hook bodies. */
/**
 * Runs tasks one after another. Parsing and answering a big request blocks the event loop for up
 * to a second per phase; run side by side, two requests' phases would follow each other with no
 * I/O in between (every ready continuation runs before the next poll), and /healthz would wait for
 * all of them. One at a time, with a turn of the event loop between phases, it waits for one phase.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
