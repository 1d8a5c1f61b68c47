import { createHash } from 'node:crypto';
import { generateAdmissionCluster as a } from './bench/admission/cluster.ts';
import { generateAdmissionCluster as b } from './bench/admission/cluster-old.tmp.ts';
const h = (gen: typeof a) => { const out: unknown[] = []; gen(100).workloads(200, 0.3, (w) => out.push(w)); return createHash('sha256').update(JSON.stringify(out)).digest('hex').slice(0, 16); };
console.log(h(a), h(b));
