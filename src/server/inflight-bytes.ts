/** @module The in-flight budget of request body bytes (`--max-inflight-bytes`). */
/**
 * Bytes of request bodies being read or processed, against a budget. A request alone is always
 * taken (`--max-body` bounds it), so a budget below the largest body cannot starve it.
 */
export class InflightBytes {
  inUse = 0;
  constructor(readonly budget: number) {}
  take(bytes: number): boolean {
    if (this.inUse > 0 && this.inUse + bytes > this.budget) return false;
    this.inUse += bytes;
    return true;
  }
  give(bytes: number): void {
    this.inUse -= bytes;
  }
}
