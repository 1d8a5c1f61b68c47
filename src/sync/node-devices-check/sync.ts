/**
 * @module `gpustack-node-devices-check`: keeps our AdmissionCheck `Active`. Kueue sets no
 * condition for a custom controller name, and a ClusterQueue that lists an inactive check stops
 * admitting, so the chain only lists the check once this has marked it Active.
 */
import { buildCondition, type DecoratorSyncResponse, type SyncOutcome } from '../../k8s/index.js';
import { NODE_DEVICES_CONTROLLER_NAME } from '../../nodefeature/index.js';
import type { SyncContext } from '../common/index.js';
import type { NodeDevicesCheckSyncRequest } from './schema.js';

/**
 * Status of an AdmissionCheck: `Active=True` when its controller is ours; other checks are left alone
 * (no `status` in the answer means Metacontroller leaves it unchanged).
 */
export function syncNodeDevicesCheck(
  request: NodeDevicesCheckSyncRequest,
  context: SyncContext,
): SyncOutcome<DecoratorSyncResponse> {
  const check = request.parent;
  if (check.spec?.controllerName !== NODE_DEVICES_CONTROLLER_NAME) return { ok: true, response: {} };
  const active = buildCondition(
    {
      type: 'Active',
      status: 'True',
      reason: 'Ready',
      message: 'the gpustack-node-devices checker answers for this check',
    },
    check.status?.conditions,
    context.now,
  );
  return { ok: true, response: { status: { conditions: [active] } } };
}
