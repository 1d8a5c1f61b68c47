// Our .proto text against the kubelet's published API: the fixture holds bytes protoc encoded from
// the upstream api.proto files of k8s.io/kubelet v0.36.3 (scripts/kubelet-plugin/wire-fixtures.sh).
// Decoding them with our types must give the values written there, and encoding those values with
// our types must give the same bytes: a wrong field number, wire type or package name fails.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DRA_HEALTH_SERVICE,
  DRA_HEALTH_V1ALPHA1_PROTO,
  DRA_SERVICE,
  DRA_V1_PROTO,
  PLUGIN_REGISTRATION_PROTO,
  REGISTRATION_SERVICE,
  draDefinition,
  draHealthDefinition,
  protoRoot,
  registrationDefinition,
} from '../../src/kubelet-plugin/index.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const wire = JSON.parse(readFileSync(path.join(HERE, '..', 'fixtures', 'kubelet-plugin', 'wire.json'), 'utf8')) as {
  source: string;
  messages: { name: string; type: string; hex: string }[];
};

/** What the fixture's text-format messages say (scripts/kubelet-plugin/wire-fixtures.sh). */
const EXPECTED: Record<string, object> = {
  'prepare-request': {
    claims: [
      { namespace: 'team-a', uid: '3f9a6c1e-0b7d-4a59-9d55-2a1f7c8e0d11', name: 'gpu-claim' },
      { namespace: 'team-b', uid: 'uid-2', name: 'two' },
    ],
  },
  'prepare-response': {
    claims: {
      'uid-1': {
        devices: [
          {
            request_names: ['gpu'],
            pool_name: 'node-a',
            device_name: 'card-0-shared',
            cdi_device_ids: ['nvidia.gpustack.ai/card=uid-1-card-0-shared-s1'],
            share_id: 's1',
          },
          {
            request_names: ['a', 'b'],
            pool_name: 'node-a',
            device_name: 'card-1',
            cdi_device_ids: ['nvidia.gpustack.ai/card=uid-1-card-1'],
          },
        ],
      },
      'uid-2': { error: 'ResourceClaim team-b/two not found' },
    },
  },
  'unprepare-request': { claims: [{ namespace: 'team-a', uid: 'uid-1', name: 'gpu-claim' }] },
  'unprepare-response': { claims: { 'uid-1': {}, 'uid-2': { error: 'boom' } } },
  'plugin-info': {
    type: 'DRAPlugin',
    name: 'nvidia.gpustack.ai',
    endpoint: '/var/lib/kubelet/plugins/nvidia.gpustack.ai/dra.sock',
    supported_versions: ['v1.DRAPlugin'],
  },
  'registration-status': { plugin_registered: true },
  'registration-refused': { error: 'no' },
  health: {
    devices: [
      {
        device: { pool_name: 'node-a', device_name: 'card-0' },
        health: 'HEALTHY',
        last_updated_time: 1796277710,
        health_check_timeout_seconds: 195,
      },
      {
        device: { pool_name: 'node-a', device_name: 'card-1' },
        health: 'UNHEALTHY',
        last_updated_time: 1796277710,
        health_check_timeout_seconds: 195,
        message: 'the card is no longer detected',
      },
    ],
  },
};

const roots = {
  dra: protoRoot(DRA_V1_PROTO),
  registration: protoRoot(PLUGIN_REGISTRATION_PROTO),
  health: protoRoot(DRA_HEALTH_V1ALPHA1_PROTO),
};
const typeOf = (fullName: string) =>
  (fullName.startsWith('pluginregistration.')
    ? roots.registration
    : fullName.startsWith('v1alpha1.')
      ? roots.health
      : roots.dra
  ).lookupType(fullName);
/** As the plugin's loader options see them: enum names, int64 as numbers, no defaults. */
const OBJECT_OPTIONS = { defaults: false, enums: String, longs: Number } as const;

describe('kubelet plugin protos', () => {
  it('the fixture was encoded by protoc from the upstream files and covers every message we exchange', () => {
    expect(wire.source).toMatch(/^libprotoc .* --encode, k8s\.io\/kubelet@v0\.36\.3 /);
    expect(wire.messages.map((m) => m.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const message of wire.messages) {
    it(`${message.name}: decodes the upstream bytes and encodes back to them`, () => {
      const type = typeOf(message.type);
      const bytes = Buffer.from(message.hex, 'hex');
      const decoded = type.toObject(type.decode(bytes), OBJECT_OPTIONS);
      expect(decoded).toEqual(EXPECTED[message.name]);
      const encoded = Buffer.from(type.encode(type.fromObject(EXPECTED[message.name] as object)).finish());
      expect(encoded.toString('hex')).toBe(message.hex);
    });
  }

  it('a field number or wire type that differs from upstream is caught', () => {
    // The check above is only worth something if a drifted .proto fails it.
    const drifted = protoRoot(DRA_V1_PROTO.replace('string device_name = 3;', 'string device_name = 6;'));
    const type = drifted.lookupType('k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesResponse');
    const hex = wire.messages.find((m) => m.name === 'prepare-response')?.hex as string;
    const decoded = type.toObject(type.decode(Buffer.from(hex, 'hex')), { defaults: false });
    expect(decoded).not.toEqual(EXPECTED['prepare-response']);
  });

  it('serves the gRPC method paths the kubelet calls', () => {
    const dra = draDefinition()[DRA_SERVICE] as Record<string, { path: string }>;
    const registration = registrationDefinition()[REGISTRATION_SERVICE] as Record<string, { path: string }>;
    expect(Object.values(dra).map((m) => m.path)).toEqual([
      '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources',
      '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources',
    ]);
    expect(Object.values(registration).map((m) => m.path)).toEqual([
      '/pluginregistration.Registration/GetInfo',
      '/pluginregistration.Registration/NotifyRegistrationStatus',
    ]);
    const health = draHealthDefinition()[DRA_HEALTH_SERVICE] as Record<
      string,
      { path: string; responseStream: boolean }
    >;
    expect(Object.values(health).map((m) => [m.path, m.responseStream])).toEqual([
      ['/v1alpha1.DRAResourceHealth/NodeWatchResources', true],
    ]);
  });
});
