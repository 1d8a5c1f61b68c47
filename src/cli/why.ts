/**
 * @module `gpustack-operator why <namespace>/<workload>` (also `kubectl gpustack why`): why a Kueue
 * Workload is not admitted — Kueue's conditions, each PodSet's flavors and topology domains, and
 * the per-card check's reason (docs/operations.md#why). One GET; loaded only when it runs.
 */
import { parseArgs } from 'node:util';
import { createKubeApi, loadKubeConfig } from '../api-client/index.js';
import { KUEUE_API_VERSION } from '../k8s/index.js';
import { NODE_DEVICES_CHECK_NAME } from '../nodefeature/index.js';
import { WorkloadSchema, explainWorkload } from '../admission/index.js';
import { UsageError } from './errors.js';
import { parseNamespace, parseObjectName } from './flags.js';
import { requireKubeClient } from './kube-client.js';

export async function whyCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { namespace: { type: 'string', short: 'n' }, kubeconfig: { type: 'string' } },
  });
  const [target, ...extra] = positionals;
  if (target === undefined || extra.length > 0)
    throw new UsageError('why takes one Workload: <namespace>/<name>, or <name> with -n <namespace>');
  const slash = target.indexOf('/');
  const namespace = parseNamespace(
    slash >= 0 ? target.slice(0, slash) : (values.namespace ?? 'default'),
    '--namespace',
  );
  const name = parseObjectName(slash >= 0 ? target.slice(slash + 1) : target, 'workload');
  requireKubeClient('why');
  const api = createKubeApi(await loadKubeConfig(values.kubeconfig));
  const raw = await api.get(`/apis/${KUEUE_API_VERSION}/namespaces/${namespace}/workloads/${name}`);
  const workload = WorkloadSchema.parse(raw);
  process.stdout.write(`${explainWorkload(workload, NODE_DEVICES_CHECK_NAME).join('\n')}\n`);
}
