import { describe, expect, it } from 'vitest';
import { makeAdmissionCheck } from '../../builders/kueue.js';
import { nodeDevicesCheckRequest } from '../../builders/request.js';
import { NOW, runHook, runScenario } from '../../support/hooks.js';
import { expectOk } from '../../support/responses.js';

const C = 'node-devices-check';
const EARLIER = '2026-02-01T08:00:00Z';
const ACTIVE_MESSAGE = 'the gpustack-node-devices checker answers for this check';

describe('syncNodeDevicesCheck scenarios', () => {
  it('marks our admission check active', async () => {
    const response = expectOk(await runScenario(C, 'marks-our-admission-check-active'));
    expect(response).toEqual({
      status: {
        conditions: [
          { type: 'Active', status: 'True', reason: 'Ready', message: ACTIVE_MESSAGE, lastTransitionTime: NOW },
        ],
      },
    });
  });

  it('leaves other admission checks alone', async () => {
    expect(expectOk(await runScenario(C, 'leaves-other-admission-checks-alone'))).toEqual({});
  });
});

describe('syncNodeDevicesCheck with builders', () => {
  it('keeps the time of an Active condition it wrote before', () => {
    const check = makeAdmissionCheck().active().obj();
    const response = expectOk(runHook(C, nodeDevicesCheckRequest(check)));
    expect(response.status).toEqual({
      conditions: [
        { type: 'Active', status: 'True', reason: 'Ready', message: ACTIVE_MESSAGE, lastTransitionTime: EARLIER },
      ],
    });
  });

  it('turns an Active=False condition True, with a new time', () => {
    const check = makeAdmissionCheck()
      .conditionsAs([{ type: 'Active', status: 'False', reason: 'Pending', message: '', lastTransitionTime: EARLIER }])
      .obj();
    const response = expectOk(runHook(C, nodeDevicesCheckRequest(check)));
    expect(response.status).toMatchObject({ conditions: [{ status: 'True', lastTransitionTime: NOW }] });
  });

  it.each(['kueue.x-k8s.io/provisioning-request', 'worker.gpustack.ai/node-devices-v2', ''])(
    'answers {} for controllerName %j',
    (name) => {
      expect(expectOk(runHook(C, nodeDevicesCheckRequest(makeAdmissionCheck('x').controller(name).obj())))).toEqual({});
    },
  );
});
