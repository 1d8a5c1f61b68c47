/**
 * @module The two kubelet gRPC APIs a DRA driver serves, as .proto text written from the published
 * API of k8s.io/kubelet v0.36.3 (Kubernetes 1.36): `pkg/apis/pluginregistration/v1` (package
 * `pluginregistration`, service `Registration`) and `pkg/apis/dra/v1` (package
 * `k8s.io.kubelet.pkg.apis.dra.v1`, service `DRAPlugin`). Package, service, message and field
 * names and numbers are the wire contract; test/kubelet-plugin/protos.test.ts decodes bytes that
 * protoc encoded from the upstream files. The text lives here rather than in .proto files so the
 * compiled output (dist/, the image) carries it without a copy step. The health stream's text
 * (below) is written the same way from `pkg/apis/dra-health/v1alpha1`.
 */
import { fromJSON, type PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

export const PLUGIN_REGISTRATION_PROTO = `syntax = "proto3";

package pluginregistration;

message PluginInfo {
  string type = 1;
  string name = 2;
  string endpoint = 3;
  repeated string supported_versions = 4;
}

message RegistrationStatus {
  bool plugin_registered = 1;
  string error = 2;
}

message RegistrationStatusResponse {}

message InfoRequest {}

service Registration {
  rpc GetInfo(InfoRequest) returns (PluginInfo) {}
  rpc NotifyRegistrationStatus(RegistrationStatus) returns (RegistrationStatusResponse) {}
}
`;

export const DRA_V1_PROTO = `syntax = "proto3";

package k8s.io.kubelet.pkg.apis.dra.v1;

service DRAPlugin {
  rpc NodePrepareResources(NodePrepareResourcesRequest) returns (NodePrepareResourcesResponse) {}
  rpc NodeUnprepareResources(NodeUnprepareResourcesRequest) returns (NodeUnprepareResourcesResponse) {}
}

message NodePrepareResourcesRequest {
  repeated Claim claims = 1;
}

message NodePrepareResourcesResponse {
  map<string, NodePrepareResourceResponse> claims = 1;
}

message NodePrepareResourceResponse {
  repeated Device devices = 1;
  string error = 2;
}

message Device {
  repeated string request_names = 1;
  string pool_name = 2;
  string device_name = 3;
  repeated string cdi_device_ids = 4;
  optional string share_id = 5;
}

message NodeUnprepareResourcesRequest {
  repeated Claim claims = 1;
}

message NodeUnprepareResourcesResponse {
  map<string, NodeUnprepareResourceResponse> claims = 1;
}

message NodeUnprepareResourceResponse {
  string error = 1;
}

message Claim {
  string namespace = 1;
  string uid = 2;
  string name = 3;
}
`;

/**
 * The kubelet's optional device health stream (`pkg/apis/dra-health/v1alpha1`, the only version in
 * k8s.io/kubelet v0.36.3): the kubelet opens it after registration and shows what it hears in the
 * Pod's `status.containerStatuses[].allocatedResourcesStatus`.
 */
export const DRA_HEALTH_V1ALPHA1_PROTO = `syntax = "proto3";

package v1alpha1;

service DRAResourceHealth {
  rpc NodeWatchResources(NodeWatchResourcesRequest) returns (stream NodeWatchResourcesResponse) {}
}

message NodeWatchResourcesRequest {}

enum HealthStatus {
  UNKNOWN = 0;
  HEALTHY = 1;
  UNHEALTHY = 2;
}

message DeviceIdentifier {
  string pool_name = 1;
  string device_name = 2;
}

message DeviceHealth {
  DeviceIdentifier device = 1;
  HealthStatus health = 2;
  int64 last_updated_time = 3;
  int64 health_check_timeout_seconds = 4;
  string message = 5;
}

message NodeWatchResourcesResponse {
  repeated DeviceHealth devices = 1;
}
`;

/** Full gRPC names, as the kubelet dials them. */
export const REGISTRATION_SERVICE = 'pluginregistration.Registration';
export const DRA_SERVICE = 'k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin';
export const DRA_HEALTH_SERVICE = 'v1alpha1.DRAResourceHealth';
/** What GetInfo lists in `supported_versions`: `<gRPC package's last element>.<service>` (the kubelet's v1 constant). */
export const DRA_SERVICE_VERSION = 'v1.DRAPlugin';
/** `PluginInfo.type` of a DRA driver. */
export const DRA_PLUGIN_TYPE = 'DRAPlugin';

/** Field names as written (snake_case), absent scalars as their defaults, as the kubelet's Go code sees them. */
const LOADER_OPTIONS = { keepCase: true, defaults: true, oneofs: true, longs: String, enums: String } as const;

/** The protobufjs root of one .proto text (also used by tests to encode and decode single messages). */
export function protoRoot(text: string): protobuf.Root {
  return protobuf.parse(text, { keepCase: true }).root;
}

function packageDefinition(text: string): PackageDefinition {
  return fromJSON(protoRoot(text).toJSON(), LOADER_OPTIONS);
}

export function registrationDefinition(): PackageDefinition {
  return packageDefinition(PLUGIN_REGISTRATION_PROTO);
}

export function draDefinition(): PackageDefinition {
  return packageDefinition(DRA_V1_PROTO);
}

export function draHealthDefinition(): PackageDefinition {
  return packageDefinition(DRA_HEALTH_V1ALPHA1_PROTO);
}

/** Wire shapes (keepCase), as grpc-js hands them to the handlers. */
export interface ClaimRef {
  readonly namespace: string;
  readonly uid: string;
  readonly name: string;
}
export interface PreparedDeviceWire {
  readonly request_names: string[];
  readonly pool_name: string;
  readonly device_name: string;
  readonly cdi_device_ids: string[];
  readonly share_id?: string | undefined;
}
export interface PrepareResultWire {
  readonly devices: PreparedDeviceWire[];
  readonly error: string;
}

/** One device's health on the stream (`health`: enum name; `last_updated_time`: Unix seconds). */
export interface DeviceHealthWire {
  readonly device: { readonly pool_name: string; readonly device_name: string };
  readonly health: 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY';
  readonly last_updated_time: number;
  readonly health_check_timeout_seconds: number;
  readonly message: string;
}
