// A gRPC client over a unix socket speaking the kubelet's side of the two APIs (registration, DRA v1),
// from the same .proto text the plugin serves (the protos themselves are proven in protos.test.ts).
import { credentials, loadPackageDefinition, type Client, type ServiceError } from '@grpc/grpc-js';
import {
  DRA_HEALTH_SERVICE,
  DRA_SERVICE,
  REGISTRATION_SERVICE,
  draDefinition,
  draHealthDefinition,
  registrationDefinition,
  type DeviceHealthWire,
  type PrepareResultWire,
} from '../../src/kubelet-plugin/index.js';

type Ctor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => Client;

function clientCtor(definition: ReturnType<typeof loadPackageDefinition>, fullName: string): Ctor {
  let node: unknown = definition;
  for (const part of fullName.split('.')) node = (node as Record<string, unknown>)[part];
  return node as Ctor;
}

function call<T>(client: Client, method: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const fn = (client as unknown as Record<string, (r: unknown, cb: (e: ServiceError | null, v: T) => void) => void>)[
      method
    ] as (r: unknown, cb: (e: ServiceError | null, v: T) => void) => void;
    fn.call(client, request, (error, value) => (error ? reject(error) : resolve(value)));
  });
}

export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supported_versions: string[];
}

export class RegistrationClient {
  private readonly client: Client;
  constructor(socket: string) {
    this.client = new (clientCtor(loadPackageDefinition(registrationDefinition()), REGISTRATION_SERVICE))(
      `unix:${socket}`,
      credentials.createInsecure(),
    );
  }
  getInfo(): Promise<PluginInfo> {
    return call(this.client, 'GetInfo', {});
  }
  notify(registered: boolean, error = ''): Promise<unknown> {
    return call(this.client, 'NotifyRegistrationStatus', { plugin_registered: registered, error });
  }
  close(): void {
    this.client.close();
  }
}

export interface Claim {
  namespace: string;
  name: string;
  uid: string;
}

export class DraClient {
  private readonly client: Client;
  constructor(socket: string) {
    this.client = new (clientCtor(loadPackageDefinition(draDefinition()), DRA_SERVICE))(
      `unix:${socket}`,
      credentials.createInsecure(),
    );
  }
  async prepare(claims: Claim[]): Promise<Record<string, PrepareResultWire>> {
    const response = await call<{ claims: Record<string, PrepareResultWire> }>(this.client, 'NodePrepareResources', {
      claims,
    });
    return response.claims;
  }
  async unprepare(claims: Claim[]): Promise<Record<string, { error: string }>> {
    const response = await call<{ claims: Record<string, { error: string }> }>(this.client, 'NodeUnprepareResources', {
      claims,
    });
    return response.claims;
  }
  close(): void {
    this.client.close();
  }
}

/** The kubelet's side of the health stream: every NodeWatchResourcesResponse, in order. */
export class HealthClient {
  private readonly client: Client;
  readonly received: DeviceHealthWire[][] = [];
  constructor(socket: string) {
    this.client = new (clientCtor(loadPackageDefinition(draHealthDefinition()), DRA_HEALTH_SERVICE))(
      `unix:${socket}`,
      credentials.createInsecure(),
    );
  }
  watch(): { cancel(): void } {
    const fn = (this.client as unknown as Record<string, (r: unknown) => NodeJS.EventEmitter & { cancel(): void }>)[
      'NodeWatchResources'
    ] as (r: unknown) => NodeJS.EventEmitter & { cancel(): void };
    const stream = fn.call(this.client, {});
    stream.on('data', (message: { devices: DeviceHealthWire[] }) => this.received.push(message.devices));
    stream.on('error', () => {});
    return stream;
  }
  close(): void {
    this.client.close();
  }
}
