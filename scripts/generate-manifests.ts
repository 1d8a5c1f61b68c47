/**
 * Writes the generated manifests: the CRDs (scripts/crds.ts) into manifests/crds/ and the Helm
 * chart's crds/, byte for byte the same, and the Kueue configuration (scripts/kueue-config.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CRD_DIRS, buildCrds, crdFileName, crdFileText } from './crds.js';
import { KUEUE_CONFIG_HEADER, KUEUE_CONFIG_PATH, buildKueueConfig } from './kueue-config.js';

for (const crdObject of buildCrds()) {
  for (const dir of CRD_DIRS) {
    const path = join(dir, crdFileName(crdObject));
    writeFileSync(path, crdFileText(crdObject));
    process.stdout.write(`wrote ${path}\n`);
  }
}

writeFileSync(KUEUE_CONFIG_PATH, KUEUE_CONFIG_HEADER + stringify(buildKueueConfig(), { lineWidth: 0 }));
process.stdout.write(`wrote ${KUEUE_CONFIG_PATH}\n`);
