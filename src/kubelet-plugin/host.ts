/**
 * @module What the plugin reads from the host: a card's DRM nodes from sysfs (by PCI address, so the
 * card and render numbers are the kernel's, not guessed from the vendor index) and whether a device
 * node exists. `hostRoot` is where the host's filesystem is mounted ('' = this process's own root).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Device } from '../../native/index.js';
import type { CardFacts } from '../dra/index.js';

const DRM_NODE = /^(card|renderD)[0-9]+$/;

export function cardFactsOnHost(hostRoot: string): (device: Device) => CardFacts {
  return (device) => {
    const facts = { index: device.index, uuid: device.uuid };
    if (!device.pciBusId) return facts;
    let names: string[];
    try {
      names = readdirSync(path.join(hostRoot || '/', 'sys/bus/pci/devices', device.pciBusId, 'drm'));
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
