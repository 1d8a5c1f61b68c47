/**
 * @module Device models from the labels vendor tools already put on nodes, so a cluster that runs
 * a vendor's GPU operator gets its pools without our agent. One reader per source; each returns
 * `DeviceModel`s that `constructModelLabels` turns into the same labels the agent would write.
 * Label keys and formats were read from each tool's own source (cited per reader).
 */
import { parseQuantityExact, type DeviceLabelSource, type ManufacturerName } from '../k8s/index.js';
import type { DeviceModel } from './labels.js';
import { MAX_COUNT } from './node-facts.js';

/** The vendor sources (every `DeviceLabelSource` but our `Agent`). */
export type VendorLabelSource = Exclude<DeviceLabelSource, 'Agent'>;

export interface VendorNodeInput {
  readonly labels: Readonly<Record<string, string>>;
  /** `status.capacity`: where a vendor publishes no card count as a label. */
  readonly capacity?: Readonly<Record<string, string | number>> | undefined;
  /** The device resource of the manufacturer (settings may override it, e.g. `huawei.com/npu`). */
  readonly deviceResource: string;
}

/** A count a vendor wrote, read with Kubernetes quantity semantics: a positive whole number ≤ MAX_COUNT. */
function vendorCount(text: string | number | undefined): number | undefined {
  if (text === undefined) return undefined;
  const quantity = parseQuantityExact(String(text));
  if (quantity === undefined || quantity.numerator <= 0n || quantity.numerator % quantity.denominator !== 0n)
    return undefined;
  const value = quantity.numerator / quantity.denominator;
  return value <= BigInt(MAX_COUNT) ? Number(value) : undefined;
}

/** `64G` as AMD's node labeller and Ascend's device plugin write it: whole GiB (their code divides by 1024). */
function gibLabelMiB(text: string | undefined): number {
  const match = text === undefined ? null : /^(\d{1,7})G$/.exec(text);
  return match ? Number(match[1]) * 1024 : 0;
}

/** The one value a labeller wrote for all cards, if all cards agree (its scalar key, or a single `<key>.<value>`). */
function singleValue(labels: Readonly<Record<string, string>>, keys: readonly string[]): string | undefined {
  const values = new Set<string>();
  for (const key of keys) {
    const scalar = labels[key];
    if (scalar) values.add(scalar);
    for (const label of Object.keys(labels)) if (label.startsWith(`${key}.`)) values.add(label.slice(key.length + 1));
  }
  return values.size === 1 ? [...values][0] : undefined;
}

function optionalFields(fields: Record<string, string | number | undefined>): Partial<DeviceModel> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== ''));
}

const GFD = 'nvidia.com/';

/**
 * NVIDIA GPU Feature Discovery (its `internal/lm` labelers): `nvidia.com/gpu.product` (the NVML
 * name, spaces → `-`), `.count`, `.memory` (MiB), `.family`, `.compute.major|minor`,
 * `nvidia.com/cuda.driver.major|minor|rev`, `nvidia.com/cuda.runtime.major|minor`. Time-slicing
 * appends `-SHARED` to the product (replicas > 1): the card is the same model, so it is dropped.
 * With `nvidia.com/mig.strategy=mixed`, `gpu.count` counts MIG-enabled cards too, which the
 * device plugin does not offer as `nvidia.com/gpu`: nothing is derived then.
 */
function fromGpuFeatureDiscovery(node: VendorNodeInput): DeviceModel[] {
  const { labels } = node;
  const product = labels[`${GFD}gpu.product`];
  const count = vendorCount(labels[`${GFD}gpu.count`]);
  if (!product || count === undefined || labels[`${GFD}mig.strategy`] === 'mixed') return [];
  const shared = (vendorCount(labels[`${GFD}gpu.replicas`]) ?? 1) > 1;
  const part = (key: string): string | undefined => labels[`${GFD}${key}`] || undefined;
  const driver = part('cuda.driver.major')
    ? [part('cuda.driver.major'), part('cuda.driver.minor'), part('cuda.driver.rev')].filter(Boolean).join('.')
    : undefined;
  const runtime = part('cuda.runtime.major')
    ? `${part('cuda.runtime.major')}.${part('cuda.runtime.minor') ?? 0}`
    : undefined;
  const comcap =
    part('gpu.compute.major') && part('gpu.compute.minor')
      ? `${part('gpu.compute.major')}.${part('gpu.compute.minor')}`
      : undefined;
  return [
    {
      manufacturer: 'nvidia',
      product: shared ? product.replace(/-SHARED$/, '') : product,
      memoryMiB: vendorCount(labels[`${GFD}gpu.memory`]) ?? 0,
      count,
      ...optionalFields({
        family: part('gpu.family'),
        computeCapability: comcap,
        driverVersion: driver,
        runtimeVersion: runtime,
      }),
    },
  ];
}

const AMD_PREFIXES = ['beta.amd.com/gpu.', 'amd.com/gpu.'] as const;
const amdKeys = (kind: string): string[] => AMD_PREFIXES.map((p) => `${p}${kind}`);

/**
 * AMD's node labeller (ROCm k8s-device-plugin, `cmd/k8s-node-labeller`), also deployed by AMD's
 * GPU operator. For each property it writes `beta.amd.com/gpu.<kind>.<value>=<cards>` and, when
 * all cards agree, `amd.com/gpu.<kind>=<value>` (else `amd.com/gpu.<kind>.<value>=<cards>`).
 * Product names have spaces → `_` and parentheses removed; `vram` is whole GiB with a `G`
 * (`192G`). Cards per product come from the per-value keys, or, for a scalar-only product, from
 * the device resource's capacity. Memory and compute units are used only when all cards agree.
 */
/** The labels under an AMD prefix, in their order: every key the AMD labeller reads (one pass over a node's labels). */
function amdLabelsOf(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  const [beta, stable] = AMD_PREFIXES;
  for (const key of Object.keys(labels))
    if (key.startsWith(stable) || key.startsWith(beta)) out[key] = labels[key] as string;
  return out;
}

function fromAmdNodeLabeller(node: VendorNodeInput): DeviceModel[] {
  const labels = amdLabelsOf(node.labels);
  const perProduct = new Map<string, number>();
  for (const prefix of amdKeys('product-name')) {
    for (const label of Object.keys(labels).sort()) {
      if (!label.startsWith(`${prefix}.`)) continue;
      const count = vendorCount(labels[label]);
      const name = label.slice(prefix.length + 1);
      if (count !== undefined && !perProduct.has(name)) perProduct.set(name, count);
    }
  }
  if (perProduct.size === 0) {
    const name = singleValue(labels, amdKeys('product-name'));
    const count = vendorCount(node.capacity?.[node.deviceResource]);
    if (name && count !== undefined) perProduct.set(name, count);
  }
  const cores = vendorCount(singleValue(labels, amdKeys('cu-count')));
  const details = optionalFields({
    family: singleValue(labels, amdKeys('family')),
    driverVersion: labels['amd.com/gpu.driver-version'],
    cores,
  });
  const memoryMiB = gibLabelMiB(singleValue(labels, amdKeys('vram')));
  return [...perProduct].map(([name, count]) => ({
    manufacturer: 'amd',
    product: name.replace(/_/g, ' '),
    memoryMiB,
    count,
    ...details,
  }));
}

/** The resources Ascend's device plugin advertises whole chips under (after the settings' one). */
const ASCEND_RESOURCES = ['huawei.com/Ascend910', 'huawei.com/Ascend310P', 'huawei.com/Ascend310'] as const;

/**
 * Ascend's device plugin (MindCluster `ascend-device-plugin`): the chip name in
 * `huawei.com/npu.chip.name` (older: `node.kubernetes.io/npu.chip.name`), e.g. `910B3`; the
 * per-chip memory in `huawei.com/npu.chip.memory` (older: `mind-cluster/npu-chip-memory`) as
 * whole GiB with a `G` (`64G`; `0G` when unknown); the driver in `huawei.com/npu.driver.version`
 * (older: `huawei.com/driver.version`). No label counts the chips: the count is the capacity of
 * the device resource (`huawei.com/npu` unless overridden, then `huawei.com/Ascend910`,
 * `…/Ascend310P`, `…/Ascend310`).
 */
function fromAscendDevicePlugin(node: VendorNodeInput): DeviceModel[] {
  const { labels } = node;
  const chip = labels['huawei.com/npu.chip.name'] || labels['node.kubernetes.io/npu.chip.name'];
  const count = [node.deviceResource, ...ASCEND_RESOURCES]
    .map((resource) => vendorCount(node.capacity?.[resource]))
    .find((c) => c !== undefined);
  if (!chip || count === undefined) return [];
  return [
    {
      manufacturer: 'ascend',
      product: chip,
      memoryMiB: gibLabelMiB(labels['huawei.com/npu.chip.memory'] ?? labels['mind-cluster/npu-chip-memory']),
      count,
      ...optionalFields({
        driverVersion: labels['huawei.com/npu.driver.version'] || labels['huawei.com/driver.version'],
      }),
    },
  ];
}

/** Each vendor source: the manufacturer it describes and its reader. */
export const VENDOR_LABEL_SOURCES: Readonly<
  Record<
    VendorLabelSource,
    { readonly manufacturer: ManufacturerName; readonly derive: (node: VendorNodeInput) => DeviceModel[] }
  >
> = {
  NVIDIAGFD: { manufacturer: 'nvidia', derive: fromGpuFeatureDiscovery },
  AMDNodeLabeller: { manufacturer: 'amd', derive: fromAmdNodeLabeller },
  AscendDevicePlugin: { manufacturer: 'ascend', derive: fromAscendDevicePlugin },
};

/**
 * The device models a vendor source describes on a node; `[]` when it has not labelled it.
 * @example deriveVendorModels('NVIDIAGFD', {
 *   labels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3', 'nvidia.com/gpu.count': '8' },
 *   deviceResource: 'nvidia.com/gpu',
 * })
 *   // [{ manufacturer: 'nvidia', product: 'NVIDIA-H100-80GB-HBM3', memoryMiB: 0, count: 8 }]
 */
export function deriveVendorModels(source: VendorLabelSource, node: VendorNodeInput): DeviceModel[] {
  return VENDOR_LABEL_SOURCES[source].derive(node);
}
