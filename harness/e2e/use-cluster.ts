// The fixture as a vitest file uses it: `const cluster = useCluster({...})` at the top of a file (or
// a describe) starts the cluster in beforeAll and stops it in afterAll, keeping and printing the
// component logs when a test, the set-up or the file's own `setup` failed.
import { afterAll, afterEach, beforeAll } from 'vitest';

import { startCluster, type Cluster, type ClusterOptions } from './cluster.js';
import { log } from './log.js';

export interface UseClusterOptions extends ClusterOptions {
  /** The file's own set-up on the started cluster (Nodes, agents, templates): a failure keeps the logs. */
  setup?: (cluster: Cluster) => Promise<void>;
  /** Runs before the cluster stops (write a sampled file, remove a temp folder). */
  teardown?: (cluster: Cluster, failed: boolean) => Promise<void> | void;
  /** Runs after every process stopped (unmount and remove what a kubelet left). */
  cleanup?: (failed: boolean) => Promise<void> | void;
}

/** A handle whose properties are the started cluster's; reading one before beforeAll ran throws. */
export type ClusterHandle = Cluster & {
  /** Marks the file failed (logs kept) from code that catches its own errors. */
  markFailed(): void;
  readonly failed: boolean;
};

export function useCluster(options: UseClusterOptions = {}): ClusterHandle {
  const { setup, teardown, cleanup, ...clusterOptions } = options;
  let cluster: Cluster | undefined;
  let failed = false;
  const own = {
    markFailed: () => {
      failed = true;
    },
    get failed() {
      return failed;
    },
  };
  beforeAll(async () => {
    try {
      cluster = await startCluster(clusterOptions);
      if (setup) {
        const at = Date.now();
        await setup(cluster);
        log(`the file's set-up took ${((Date.now() - at) / 1000).toFixed(1)} s`);
      }
    } catch (error) {
      failed = true;
      throw error;
    }
  }, 3_600_000);
  afterEach((context) => {
    if (context.task.result?.state === 'fail') failed = true;
  });
  afterAll(async () => {
    if (!cluster) return;
    try {
      await teardown?.(cluster, failed);
    } finally {
      if (failed) {
        log(`component logs kept in ${cluster.logsDir}`);
        if (cluster.kueue) log(`last lines of Kueue's log:\n${cluster.kueue.process.tail(30)}`);
      }
      await cluster.stop({ failed });
      await cleanup?.(failed);
    }
  }, 120_000);
  return new Proxy(own as ClusterHandle, {
    get(target, key, receiver) {
      if (key in target) return Reflect.get(target, key, receiver);
      if (!cluster)
        throw new Error(`the cluster is not started (read of "${String(key)}" before useCluster's beforeAll)`);
      return Reflect.get(cluster, key);
    },
  });
}
