/** @module `--help` and `<command> --help`: each command's options in one place. */
import { DEFAULT_PORT } from './serve.js';

/** Each command's options, shown by `<command> --help` and, together, by `--help`. */
const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `  serve      Run the Metacontroller hook server
             --port ${DEFAULT_PORT} (or $PORT)  --host 0.0.0.0  --log-level info
             --max-body 256Mi  largest request body (413 above): the chain hook of 10,000 Nodes
                               (~23 KB of JSON each) fits
             --max-inflight-bytes SIZE  request bytes read and processed at once (429 + Retry-After
                               above); default (container memory limit - 256Mi) / 6, 2Gi assumed
                               without a limit
             --drain-timeout 20s  on SIGTERM, time for requests in flight before connections close
             --join-pacing 60s  longest hold of a shard or chain sync while Nodes join in numbers
                               (0s: none; at most --hook-timeout less 10s, else serve refuses to start)
             --hook-timeout 90s  the timeout manifests/ give those two hooks: every hold ends 10s
                               before it, counted from when the request came
             [--tls-cert FILE --tls-key FILE] serve the hooks over HTTPS (PEM; read again when
                               they change, so a rotated Secret needs no restart)
             [--token-file FILE] callers must send Authorization: Bearer <its content>
             [--previous-token-file FILE] its token is accepted too while the file holds one
                               (absent or empty: none; a token rotation)
             [--client-ca FILE] callers must present a client certificate this CA signed
                               (either: anyone else gets 401; needs --metrics-port)
             [--metrics-port N] /healthz, /readyz, /metrics there (plain HTTP, no credentials)
                               and only the hooks on --port
             --reload-interval 10s  how often the credential files are read for a change
             [--admission] also run the admission checker in this process (its flags as below)
`,
  render: `  render     Print the labels and Kueue objects the chain derives from a node dump
             --nodes FILE|- (kubectl get nodes -o yaml|json, or an array of Nodes; - reads stdin)
             [--chain FILE|-] (the SchedulingChain named default)  [--namespaces default,team-a]
             [-o yaml|json]  [--objects-only] (the objects alone: a YAML stream, or a JSON List,
             for \`| kubectl apply --dry-run=server -f -\`)
`,
  agent: `  agent      Detect this node's accelerators every interval and publish the labels and
             ResourceSlices on change
             --node NAME (default $NODE_NAME)  --publish nodefeature|feature-file|node-labels
             --interval 60s  --namespace gpustack-system  --features-dir DIR  --health-port 8081
             [--kubeconfig FILE] [--manufacturers nvidia,amd] [--host-root DIR]  --log-level info
`,
  detect: `  detect     Print what the vendor libraries report and the labels the agent would publish
             (-o json also, for the node $NODE_NAME, who owns each manufacturer's cards — its
             device plugin or DRA, read from the API server — and the ResourceSlices)
             [-o json|text] [--manufacturers nvidia,amd] [--host-root DIR] [--kubeconfig FILE]
`,
  'kueue-config': `  kueue-config
             Print the Kueue manager configuration with ours merged in (our feature gates, device
             transformations and DeviceClass mappings set, every other key kept), valid for that
             Kueue version [--kueue-version 0.19] [--merge FILE|-] (a Configuration, the
             kueue-manager-config ConfigMap or the values of Kueue's Helm chart; printed back in the
             same shape) [--nodes FILE|-] (map the model classes gpustack-<aKey> of these nodes too)
             [-o yaml|json]
`,
  admission: `  admission  Run the per-card admission check: watch Workloads, ResourceFlavors, Nodes and Pods,
             write our entry of Workload.status.admissionChecks (Ready or Retry)
             [--kubeconfig FILE] (default $KUBECONFIG or in-cluster)  --health-port 8082
             --check-name gpustack-node-devices  --log-level info
             --leader-elect true  --leader-election-namespace NS (default $POD_NAMESPACE)
`,
  cards: `  cards      Print every card of the cluster: node, index, model, memory, state (free, whole,
             shared (claims)), memory promised, holders (namespace/pod), cordon and health taints
             [--kubeconfig FILE] (default $KUBECONFIG)  [--node NAME] [--pool INSTANCETYPE]
             [-n|--namespace NS] (cards held by its claims)  [-o wide|json|yaml]
             (also \`kubectl gpustack cards\`; needs list on resourceslices, resourceclaims, nodes,
             instancetypes and devicetaintrules)
             cordon NODE/CARD --reason TEXT  keep new claims off one card through DRA device taints
                               (DeviceTaintRule: resource.k8s.io/v1 from Kubernetes 1.37, v1beta2
                               behind a gate in 1.36; NoSchedule: running pods stay); NODE alone:
                               every card of it; CARD: 3, card-3 or nvidia:card-3
                               [--drain --yes] NoExecute: evicts the pods holding it (listed first;
                               without --yes nothing is done)
             uncordon NODE/CARD | NODE  delete the card's (or node's) cordon rules
`,
  why: `  why        Why a Kueue Workload is not admitted: Kueue's conditions, each PodSet's flavors and
             topology domains, and the per-card check's reason (domain, free cards per node)
             NAMESPACE/WORKLOAD | WORKLOAD [-n|--namespace NS]  [--kubeconfig FILE]
             (also \`kubectl gpustack why\`; needs get on workloads.kueue.x-k8s.io)
`,
};

const USAGE_FOOTER = `
Flags take \`--flag value\` or \`--flag=value\` (and \`-o json\`, \`-o=json\`, \`-ojson\`).
--host-root DIR: the host's filesystem is mounted at DIR (the DaemonSet: /host); vendor libraries
are looked up by full path in their install folders under it.
Vendor library overrides: GPUSTACK_<MFR>_LIBRARY=/path/lib.so (e.g. GPUSTACK_NVIDIA_LIBRARY), a path
in this process's filesystem, not under --host-root.
Logs: one JSON object per line; readable lines instead when stderr is a terminal.
`;

export const USAGE = `Usage: gpustack-operator <command> [options]
       gpustack-operator <command> --help | --version

Commands:
${Object.values(COMMAND_HELP).join('')}${USAGE_FOOTER}`;

export function commandUsage(command: string): string {
  return `Usage: gpustack-operator ${command} [options]\n\n${COMMAND_HELP[command] ?? ''}${USAGE_FOOTER}`;
}
