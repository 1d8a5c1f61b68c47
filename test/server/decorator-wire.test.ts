/**
 * DecoratorController hooks of version v2 send the target as `parent` and its attachments as
 * `children` (metacontroller `pkg/controller/decorator/api/v2/hooks.go`); v1 sent `object` and
 * `attachments`. Our manifests declare v2, but older Metacontroller releases send v1 whatever the
 * manifest says, so the decorator routes read both; errors name the v2 field (`parent`).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/index.js';
import { post, type InMemoryApp } from './helpers.js';

const CHECK = {
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'AdmissionCheck',
  metadata: { name: 'gpustack-node-devices', uid: '3b4c5d6e-7f80-4192-a3b4-c5d6e7f80912', generation: 1 },
  spec: { controllerName: 'worker.gpustack.ai/node-devices' },
};
const NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'cpu-01',
    uid: '2a3a5b7e-265a-42b5-afdc-d956960bf3ef',
    labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
  },
  status: { capacity: { cpu: '16' } },
};
const ACTIVE = {
  status: {
    conditions: [
      {
        type: 'Active',
        status: 'True',
        reason: 'Ready',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        message: 'the gpustack-node-devices checker answers for this check',
      },
    ],
  },
};
const CONTROLLER = { metadata: { name: 'gpustack-node-devices-check' } };

describe('decorator hook bodies', () => {
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp({ clock: () => new Date('2026-01-01T00:00:00Z') });
  });

  describe('POST /hooks/node-devices-check/sync', () => {
    it('takes the v2 form: parent and children', async () => {
      const answer = await post(app, '/hooks/node-devices-check/sync', {
        controller: CONTROLLER,
        parent: CHECK,
        children: {},
        related: {},
        finalizing: false,
      });

      expect(answer.status).toBe(200);
      expect(answer.json).toEqual(ACTIVE);
    });

    it('takes the v1 form: object and attachments', async () => {
      const answer = await post(app, '/hooks/node-devices-check/sync', {
        controller: CONTROLLER,
        object: CHECK,
        attachments: {},
        related: {},
        finalizing: false,
      });

      expect(answer.status).toBe(200);
      expect(answer.json).toEqual(ACTIVE);
    });

    it('names a missing target parent', async () => {
      const answer = await post(app, '/hooks/node-devices-check/sync', {
        controller: CONTROLLER,
        related: {},
        finalizing: false,
      });

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        error: {
          code: 'BadHookRequest',
          message: 'parent: Invalid input: expected object, received undefined',
          issues: [
            { path: 'parent', code: 'invalid_type', message: 'Invalid input: expected object, received undefined' },
          ],
        },
      });
    });
  });

  describe('POST /hooks/node-profile/sync', () => {
    // The ChainSettings the chain writes for an all-defaults SchedulingChain.
    const SETTINGS = {
      'ChainSettings.worker.gpustack.ai/v1alpha1': {
        default: {
          apiVersion: 'worker.gpustack.ai/v1alpha1',
          kind: 'ChainSettings',
          metadata: { name: 'default' },
          spec: {},
        },
      },
    };
    it('answers the v2 and the v1 form of one request byte-identically', async () => {
      const v2 = await post(app, '/hooks/node-profile/sync', {
        controller: CONTROLLER,
        parent: NODE,
        children: {},
        related: SETTINGS,
        finalizing: false,
      });
      const v1 = await post(app, '/hooks/node-profile/sync', {
        controller: CONTROLLER,
        object: NODE,
        attachments: {},
        related: SETTINGS,
        finalizing: false,
      });

      expect(v2.status).toBe(200);
      expect(v2.json).toMatchObject({
        labels: {
          'general.feature.gpustack.ai/generic': 'true',
          'general.feature.gpustack.ai/generic.count': '16',
          'gpustack.ai/managed': 'true',
        },
        attachments: [{ kind: 'NodeProfile', metadata: { name: 'cpu-01' } }],
      });
      expect(v1.text).toBe(v2.text);
    });

    it('names a label value that is not a string by its path under parent', async () => {
      const target = 'parent';
      const answer = await post(app, '/hooks/node-profile/sync', {
        parent: { ...NODE, metadata: { ...NODE.metadata, labels: { foo: 1 } } },
        children: {},
      });

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        error: {
          code: 'BadHookRequest',
          message: `${target}.metadata.labels.foo: Invalid input: expected string, received number`,
          issues: [
            {
              path: `${target}.metadata.labels.foo`,
              code: 'invalid_type',
              message: 'Invalid input: expected string, received number',
            },
          ],
        },
      });
    });
  });
});
