import { describe, expect, it } from 'vitest';

import { atLeast, controlPlaneFlags, minorOf } from '../../harness/e2e/versions.js';

describe('the e2e control-plane flags per Kubernetes version', () => {
  it('serves DeviceTaintRule as resource.k8s.io/v1 on 1.37 with no gate and no runtime-config', () => {
    expect(controlPlaneFlags('v1.37.2', { deviceTaintRules: true })).toEqual({
      featureGates: {},
      apiserverArgs: [],
      deviceTaintRules: { groupVersion: 'resource.k8s.io/v1', path: '/apis/resource.k8s.io/v1/devicetaintrules' },
    });
  });

  it('opts 1.36 in: the DRADeviceTaintRules gate and resource.k8s.io/v1beta2 through runtime-config', () => {
    expect(controlPlaneFlags('v1.36.3', { deviceTaintRules: true })).toEqual({
      featureGates: { DRADeviceTaintRules: true },
      apiserverArgs: ['--runtime-config=resource.k8s.io/v1beta2=true'],
      deviceTaintRules: {
        groupVersion: 'resource.k8s.io/v1beta2',
        path: '/apis/resource.k8s.io/v1beta2/devicetaintrules',
      },
    });
  });

  it('serves none on request: 1.37 turns the resource off, 1.36 serves none by default', () => {
    expect(controlPlaneFlags('v1.37.2', { deviceTaintRules: false }).apiserverArgs).toEqual([
      '--runtime-config=resource.k8s.io/v1/devicetaintrules=false',
    ]);
    expect(controlPlaneFlags('v1.36.3', { deviceTaintRules: false })).toEqual({ featureGates: {}, apiserverArgs: [] });
  });

  it("puts the scenario's own gates and flags last, so they win", () => {
    const flags = controlPlaneFlags('v1.36.3', {
      deviceTaintRules: true,
      gates: { DRADeviceTaintRules: false, Other: true },
      apiserverArgs: ['--v=2'],
    });
    expect(flags.featureGates).toEqual({ DRADeviceTaintRules: false, Other: true });
    expect(flags.apiserverArgs).toEqual(['--runtime-config=resource.k8s.io/v1beta2=true', '--v=2']);
  });

  it('reads versions with or without v; an unknown one (a prebuilt binary) counts as the newest', () => {
    expect(minorOf('v1.37.2')).toEqual({ major: 1, minor: 37 });
    expect(minorOf('0.19.2')).toEqual({ major: 0, minor: 19 });
    expect(minorOf('prebuilt')).toBeUndefined();
    expect(atLeast('v1.36.3', 1, 37)).toBe(false);
    expect(atLeast('v1.37.0', 1, 37)).toBe(true);
    expect(atLeast('v2.0.0', 1, 37)).toBe(true);
    expect(atLeast('prebuilt', 1, 37)).toBe(true);
  });
});
