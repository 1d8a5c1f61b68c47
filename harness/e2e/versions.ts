// What the e2e cluster sets per upstream version, decided from the versions alone (no I/O), so a
// unit test pins it: the default lane runs Kubernetes v1.37.2 + Kueue v0.19.2 + Metacontroller
// v4.17.2, the compatibility lane Kubernetes v1.36.3 + Kueue v0.17.0
// (E2E_KUBERNETES_VERSION / E2E_KUEUE_VERSION, scripts/e2e/build-components.sh).

/** `v1.37.2` → { major: 1, minor: 37 }; undefined for what is not a version ('prebuilt'). */
export function minorOf(version: string): { major: number; minor: number } | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.|$)/.exec(version);
  return match ? { major: Number(match[1]), minor: Number(match[2]) } : undefined;
}

/** Whether `version` is at least `major.minor`; an unknown version counts as the newest (a prebuilt binary). */
export function atLeast(version: string, major: number, minor: number): boolean {
  const parsed = minorOf(version);
  if (!parsed) return true;
  return parsed.major > major || (parsed.major === major && parsed.minor >= minor);
}

export interface DeviceTaintRuleApi {
  /** `resource.k8s.io/v1` (1.37+) or `resource.k8s.io/v1beta2` (1.36, opted in). */
  groupVersion: string;
  /** The collection, e.g. `/apis/resource.k8s.io/v1/devicetaintrules`. */
  path: string;
}

export function deviceTaintRuleApi(groupVersion: string): DeviceTaintRuleApi {
  return { groupVersion, path: `/apis/${groupVersion}/devicetaintrules` };
}

export interface ControlPlaneFlags {
  /** `--feature-gates` on kube-apiserver, kube-controller-manager and kube-scheduler alike. */
  featureGates: Record<string, boolean>;
  /** Extra kube-apiserver flags. */
  apiserverArgs: string[];
  /** Where DeviceTaintRule is served with these flags; undefined when the scenario did not ask for it. */
  deviceTaintRules?: DeviceTaintRuleApi;
}

/**
 * The control-plane flags for a scenario on `kubernetesVersion`. `deviceTaintRules: true`: DeviceTaintRule is
 * `resource.k8s.io/v1` with no gate and no runtime-config from 1.37 (DRADeviceTaintRules GA, on);
 * 1.36 serves it only as `resource.k8s.io/v1beta2` with `--runtime-config=resource.k8s.io/v1beta2=true`
 * and the DRADeviceTaintRules gate (beta, off; k8s.io/kubernetes v1.36.3 pkg/features).
 * `deviceTaintRules: false`: served nowhere (1.37: the resource turned off by runtime-config);
 * undefined: the version's default. The
 * scenario's own gates and flags come last, so they win.
 */
export function controlPlaneFlags(
  kubernetesVersion: string,
  wanted: { deviceTaintRules?: boolean; gates?: Readonly<Record<string, boolean>>; apiserverArgs?: readonly string[] },
): ControlPlaneFlags {
  const featureGates: Record<string, boolean> = {};
  const apiserverArgs: string[] = [];
  let deviceTaintRules: DeviceTaintRuleApi | undefined;
  if (wanted.deviceTaintRules === false) {
    // A cluster that serves none (what a default 1.36 is): 1.37 turns the one resource off.
    if (atLeast(kubernetesVersion, 1, 37))
      apiserverArgs.push('--runtime-config=resource.k8s.io/v1/devicetaintrules=false');
  } else if (wanted.deviceTaintRules) {
    if (atLeast(kubernetesVersion, 1, 37)) {
      deviceTaintRules = deviceTaintRuleApi('resource.k8s.io/v1');
    } else {
      featureGates['DRADeviceTaintRules'] = true;
      apiserverArgs.push('--runtime-config=resource.k8s.io/v1beta2=true');
      deviceTaintRules = deviceTaintRuleApi('resource.k8s.io/v1beta2');
    }
  }
  Object.assign(featureGates, wanted.gates ?? {});
  apiserverArgs.push(...(wanted.apiserverArgs ?? []));
  return { featureGates, apiserverArgs, ...(deviceTaintRules ? { deviceTaintRules } : {}) };
}
