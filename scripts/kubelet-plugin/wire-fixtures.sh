#!/usr/bin/env bash
# Encodes kubelet plugin API messages with protoc from the UPSTREAM .proto files of k8s.io/kubelet
# (the module the kubelet is built from, fetched through the Go module proxy) and prints them as
# JSON: test/fixtures/kubelet-plugin/wire.json. test/kubelet-plugin/protos.test.ts decodes these
# bytes with our own .proto text, so a wrong field number, type or package name fails it.
#
#   scripts/kubelet-plugin/wire-fixtures.sh > test/fixtures/kubelet-plugin/wire.json
#
# Needs go and protoc (Debian: protobuf-compiler). KUBELET_MODULE_VERSION defaults to v0.36.3 (Kubernetes 1.36.3).
set -euo pipefail
version=${KUBELET_MODULE_VERSION:-v0.36.3}
dir=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubelet@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[[ -n "$dir" ]] || { echo "cannot download k8s.io/kubelet@$version" >&2; exit 1; }
dra="$dir/pkg/apis/dra/v1"
reg="$dir/pkg/apis/pluginregistration/v1"
health="$dir/pkg/apis/dra-health/v1alpha1"

# name|proto dir|message type|text format
messages=(
  "prepare-request|$dra|k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest|claims { namespace: \"team-a\" uid: \"3f9a6c1e-0b7d-4a59-9d55-2a1f7c8e0d11\" name: \"gpu-claim\" } claims { namespace: \"team-b\" uid: \"uid-2\" name: \"two\" }"
  "prepare-response|$dra|k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesResponse|claims { key: \"uid-1\" value { devices { request_names: \"gpu\" pool_name: \"node-a\" device_name: \"card-0-shared\" cdi_device_ids: \"nvidia.gpustack.ai/card=uid-1-card-0-shared-s1\" share_id: \"s1\" } devices { request_names: \"a\" request_names: \"b\" pool_name: \"node-a\" device_name: \"card-1\" cdi_device_ids: \"nvidia.gpustack.ai/card=uid-1-card-1\" } } } claims { key: \"uid-2\" value { error: \"ResourceClaim team-b/two not found\" } }"
  "unprepare-request|$dra|k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesRequest|claims { namespace: \"team-a\" uid: \"uid-1\" name: \"gpu-claim\" }"
  "unprepare-response|$dra|k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesResponse|claims { key: \"uid-1\" value { } } claims { key: \"uid-2\" value { error: \"boom\" } }"
  "plugin-info|$reg|pluginregistration.PluginInfo|type: \"DRAPlugin\" name: \"nvidia.gpustack.ai\" endpoint: \"/var/lib/kubelet/plugins/nvidia.gpustack.ai/dra.sock\" supported_versions: \"v1.DRAPlugin\""
  "registration-status|$reg|pluginregistration.RegistrationStatus|plugin_registered: true error: \"\""
  "registration-refused|$reg|pluginregistration.RegistrationStatus|plugin_registered: false error: \"no\""
  "health|$health|v1alpha1.NodeWatchResourcesResponse|devices { device { pool_name: \"node-a\" device_name: \"card-0\" } health: HEALTHY last_updated_time: 1796277710 health_check_timeout_seconds: 195 } devices { device { pool_name: \"node-a\" device_name: \"card-1\" } health: UNHEALTHY last_updated_time: 1796277710 health_check_timeout_seconds: 195 message: \"the card is no longer detected\" }"
)

echo '{'
echo "  \"source\": \"$(protoc --version) --encode, k8s.io/kubelet@$version pkg/apis/{dra,pluginregistration}/v1/api.proto, pkg/apis/dra-health/v1alpha1/api.proto\","
echo '  "messages": ['
n=${#messages[@]}
for i in "${!messages[@]}"; do
  IFS='|' read -r name pdir type text <<<"${messages[$i]}"
  hex=$(printf '%s' "$text" | protoc -I "$pdir" --encode="$type" "$pdir/api.proto" | od -An -v -tx1 | tr -d ' \n')
  sep=','; [[ $i -eq $((n - 1)) ]] && sep=''
  printf '    {"name": "%s", "type": "%s", "hex": "%s"}%s\n' "$name" "$type" "$hex" "$sep"
done
echo '  ]'
echo '}'
