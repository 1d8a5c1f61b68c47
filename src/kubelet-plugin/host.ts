/**
 * @module What the plugin reads from the host: a card's DRM nodes from sysfs (by PCI address, so the
 * card and render numbers are the kernel's, not guessed from the vendor index), an NVIDIA card's
 * device minor from the driver's /proc file (NVML's index need not be the minor) and whether a
 * device node exists. `hostRoot` is where the host's filesystem is mounted ('' = this process's own root).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Device } from '../../native/index.js';
import type { CardFacts } from '../dra/index.js';

const DRM_NODE = /^(card|renderD)[0-9]+$/;

/** `Device Minor: 3` in the NVIDIA driver's per-GPU information file (its /dev/nvidia<minor>). */
function nvidiaMinor(root: string, pciBusId: string): number | undefined {
  try {
    const text = readFileSync(path.join(root, 'proc/driver/nvidia/gpus', pciBusId, 'information'), 'utf8');
    const minor = /^Device Minor:\s*(\d+)\s*$/m.exec(text)?.[1];
    return minor === undefined ? undefined : Number(minor);
  } catch {
    return undefined;
  }
}

export function cardFactsOnHost(hostRoot: string): (device: Device) => CardFacts {
  return (device) => {
    const root = hostRoot || '/';
    const minor = device.manufacturer === 'nvidia' && device.pciBusId ? nvidiaMinor(root, device.pciBusId) : undefined;
    const facts = { index: device.index, uuid: device.uuid, ...(minor !== undefined ? { minor } : {}) };
    if (!device.pciBusId) return facts;
    let names: string[];
    try {
      names = readdirSync(path.join(root, 'sys/bus/pci/devices', device.pciBusId, 'drm'));
    } catch {
      return facts;
    }
    const drmNodes = names
      .filter((n) => DRM_NODE.test(n))
      .sort()
      .map((n) => `/dev/dri/${n}`);
    return drmNodes.length > 0 ? { ...facts, drmNodes } : facts;
  };
}

export function deviceNodeExistsOnHost(hostRoot: string): (devicePath: string) => boolean {
  return (devicePath) => existsSync(path.join(hostRoot || '/', devicePath));
}
