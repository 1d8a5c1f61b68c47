/**
 * @module The commands that talk to a cluster (`agent`, `admission`, `serve --admission`) load
 * the Kubernetes client, which does not load on every Node.js the others run on: they refuse in
 * one line instead of failing inside the client's imports.
 */
import { KUBE_CLIENT_MIN_NODE, kubeClientLoads } from '../api-client/index.js';

/** Throws (exit 1, one line) when `command` cannot load the Kubernetes client on this Node.js. */
export function requireKubeClient(command: string): void {
  if (kubeClientLoads()) return;
  throw new Error(
    `${command} needs Node.js >= ${KUBE_CLIENT_MIN_NODE} (this is ${process.version}); ` +
      `run it with npx gpustack-operator ${command} …, which uses the Node.js that npm ci installed`,
  );
}
