/**
 * @module The manufacturer table (docs/architecture.md#manufacturers): one row per vendor, nothing read from the
 * environment. The chain builds its flavors and queues with each row's device resource and the
 * admission checker counts the same one, so the table sits here, beside the settings that may
 * override it (`deviceResourceOf`).
 */
import { MANUFACTURER_NAMES, type ManufacturerName } from '../k8s/index.js';

export interface Manufacturer {
  readonly key: ManufacturerName;
  /** PCI vendor id, as NFD's `pci-<id>.present` label spells it. */
  readonly pciVendor: string;
  /** Extended resource of the vendor's device plugin, e.g. `nvidia.com/gpu`. */
  readonly deviceResource: string;
  /** Logical slices per card; overcommit vendors may give every slice 100 % of the cores. */
  readonly slices: number;
  readonly overcommit: boolean;
}

export const MANUFACTURERS: Readonly<Record<ManufacturerName, Manufacturer>> = {
  amd: { key: 'amd', pciVendor: '1002', deviceResource: 'amd.com/gpu', slices: 100, overcommit: false },
  ascend: { key: 'ascend', pciVendor: '19e5', deviceResource: 'huawei.com/npu', slices: 63, overcommit: true },
  cambricon: {
    key: 'cambricon',
    pciVendor: 'cabc',
    deviceResource: 'cambricon.com/mlu',
    slices: 100,
    overcommit: false,
  },
  hygon: { key: 'hygon', pciVendor: '1d94', deviceResource: 'hygon.com/dcu', slices: 100, overcommit: false },
  iluvatar: { key: 'iluvatar', pciVendor: '1e3e', deviceResource: 'iluvatar.com/gpu', slices: 100, overcommit: false },
  metax: { key: 'metax', pciVendor: '9999', deviceResource: 'metax-tech.com/gpu', slices: 100, overcommit: false },
  mthreads: { key: 'mthreads', pciVendor: '1ed5', deviceResource: 'mthreads.com/gpu', slices: 100, overcommit: false },
  nvidia: { key: 'nvidia', pciVendor: '10de', deviceResource: 'nvidia.com/gpu', slices: 128, overcommit: true },
  thead: { key: 'thead', pciVendor: '1ded', deviceResource: 'alibabacloud.com/ppu', slices: 100, overcommit: false },
};

/** True when `name` is one of the nine manufacturer keys. */
export function isManufacturer(name: string): name is ManufacturerName {
  return (MANUFACTURER_NAMES as readonly string[]).includes(name);
}
