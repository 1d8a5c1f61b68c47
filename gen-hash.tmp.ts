import { createHash } from 'node:crypto';
import { generateNodes } from '/work/wt-house/bench/shared/cluster-nodes.ts';
import { generateCluster } from '/work/wt-house/bench/shared/cluster.ts';
import { generateAdmissionCluster } from '/work/wt-house/bench/admission/cluster.ts';
const h = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);
console.log('nodes', h(generateNodes(300)), 'cluster', h(generateCluster(300)));
try { console.log('admission', h(generateAdmissionCluster(300))); } catch (e) { console.log('admission err', String(e).slice(0,200)); }
