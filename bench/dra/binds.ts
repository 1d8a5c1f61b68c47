/**
 * @module How `npm run bench:dra` reads its measurements, as pure functions: the binds kube-scheduler
 * logs at `-v=2` ("Successfully bound pod to node", stamped by the scheduler itself when the API
 * server accepted the binding; a Pod watch from the driver lost events on the loaded machine), the
 * rates they give, and a process's CPU seconds at a moment between two /proc samples.
 */

export interface Bind {
  /** Epoch milliseconds (klog stamps local time to the microsecond, without the year). */
  readonly at: number;
  readonly pod: string;
  /** Nodes the scheduler ran the filters on for this Pod, and those that passed. */
  readonly evaluatedNodes: number;
  readonly feasibleNodes: number;
}

const BIND =
  /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ \S+\] "Successfully bound pod to node" pod="([^"]+)" node="[^"]*"(?: evaluatedNodes=(\d+) feasibleNodes=(\d+))?/;

/** The binds in a kube-scheduler log (klog text format), in log order; `year` completes klog's stamps. */
export function parseBinds(log: string, year: number): Bind[] {
  const out: Bind[] = [];
  for (const line of log.split('\n')) {
    const m = BIND.exec(line);
    if (!m) continue;
    const [, month, day, h, min, s, micros, pod, evaluated, feasible] = m;
    const at = new Date(year, Number(month) - 1, Number(day), Number(h), Number(min), Number(s)).getTime();
    out.push({
      at: at + Number(micros) / 1000,
      pod: pod as string,
      evaluatedNodes: Number(evaluated ?? 0),
      feasibleNodes: Number(feasible ?? 0),
    });
  }
  return out;
}

export interface BindStats {
  readonly bound: number;
  /** From the first bind to the last, seconds. */
  readonly spanSeconds: number;
  /** (bound − 1) / span. */
  readonly podsPerSecond: number;
  /** The same from the middle bind to the last (upstream's fill benchmarks measure the second half). */
  readonly secondHalfPodsPerSecond: number;
  /** Mean of the binds in each whole second from the first (upstream's SchedulingThroughput "Average"). */
  readonly sampleMeanPodsPerSecond: number;
  readonly meanEvaluatedNodes: number;
}

export function bindStats(binds: readonly Bind[]): BindStats {
  const times = binds.map((b) => b.at).sort((a, b) => a - b);
  const first = times[0] ?? 0;
  const last = times.at(-1) ?? 0;
  const span = (last - first) / 1000;
  const half = Math.floor(times.length / 2);
  const secondHalf = times.length > 3 ? (last - (times[half] as number)) / 1000 : 0;
  const seconds = Math.floor(span);
  const perSecond = Array.from({ length: seconds }, () => 0);
  for (const t of times) {
    const s = Math.floor((t - first) / 1000);
    if (s < seconds) perSecond[s] = (perSecond[s] ?? 0) + 1;
  }
  return {
    bound: times.length,
    spanSeconds: span,
    podsPerSecond: span > 0 ? (times.length - 1) / span : 0,
    secondHalfPodsPerSecond: secondHalf > 0 ? (times.length - 1 - half) / secondHalf : 0,
    sampleMeanPodsPerSecond: seconds > 0 ? perSecond.reduce((a, b) => a + b, 0) / seconds : 0,
    meanEvaluatedNodes: binds.length > 0 ? binds.reduce((a, b) => a + b.evaluatedNodes, 0) / binds.length : 0,
  };
}

export interface CpuSample {
  /** Epoch milliseconds. */
  readonly at: number;
  /** CPU seconds by process. */
  readonly cpu: Readonly<Record<string, number>>;
}

/** Each process's CPU seconds at `at`, linear between the samples around it (the nearest end outside them). */
export function cpuAt(samples: readonly CpuSample[], at: number): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const after = sorted.findIndex((s) => s.at >= at);
  if (after < 0) return { ...(sorted.at(-1)?.cpu ?? {}) };
  if (after === 0) return { ...(sorted[0]?.cpu ?? {}) };
  const a = sorted[after - 1] as CpuSample;
  const b = sorted[after] as CpuSample;
  const w = b.at === a.at ? 1 : (at - a.at) / (b.at - a.at);
  return Object.fromEntries(
    Object.keys(b.cpu).map((k) => [k, (a.cpu[k] ?? 0) + ((b.cpu[k] ?? 0) - (a.cpu[k] ?? 0)) * w]),
  );
}
