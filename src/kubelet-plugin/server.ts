/**
 * @module One driver's kubelet plugin: the registration service on
 * `<registry dir>/<driver>-reg.sock` (the kubelet's plugin watcher finds the socket, calls GetInfo,
 * checks the versions, then NotifyRegistrationStatus) and the DRA service on
 * `<plugins dir>/<driver>/dra.sock`, the endpoint GetInfo names. The kubelet dials that endpoint as
 * a host path, so the DaemonSet mounts the plugins folder at the same path.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  Server,
  ServerCredentials,
  loadPackageDefinition,
  status as grpcStatus,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { ClaimReference } from '../dra/index.js';
import { SILENT_LOGGER, type Logger } from '../runtime/index.js';
import { removeFile } from './files.js';
import type { ClaimPreparer } from './preparer.js';
import {
  DRA_HEALTH_SERVICE,
  DRA_PLUGIN_TYPE,
  DRA_SERVICE,
  DRA_SERVICE_VERSION,
  REGISTRATION_SERVICE,
  draDefinition,
  draHealthDefinition,
  registrationDefinition,
  type DeviceHealthWire,
} from './protos.js';

/** The kubelet's defaults (`--root-dir /var/lib/kubelet`). */
export const DEFAULT_REGISTRY_DIR = '/var/lib/kubelet/plugins_registry';
export const DEFAULT_PLUGINS_DIR = '/var/lib/kubelet/plugins';

export interface PluginPaths {
  readonly registrationSocket: string;
  readonly draSocket: string;
  readonly checkpointFile: string;
}

export function pluginPaths(driver: string, registryDir: string, pluginsDir: string): PluginPaths {
  const own = path.join(pluginsDir, driver);
  return {
    registrationSocket: path.join(registryDir, `${driver}-reg.sock`),
    draSocket: path.join(own, 'dra.sock'),
    checkpointFile: path.join(own, 'checkpoint.json'),
  };
}

/** What /healthz shows of one plugin. */
export interface PluginStatus {
  readonly driver: string;
  readonly registrationSocket: string;
  readonly draSocket: string;
  /** Both socket files are there (the kubelet removes neither; a missing one means the plugin is unreachable). */
  readonly serving: boolean;
  /** The kubelet's last NotifyRegistrationStatus; undefined before the first. */
  readonly registered?: boolean;
  readonly registrationError?: string;
}

export interface RunningPlugin {
  status(): PluginStatus;
  /** The devices' health: kept, and sent to every open NodeWatchResources stream (the kubelet's). */
  setHealth(devices: readonly DeviceHealthWire[]): void;
  close(): Promise<void>;
}

export interface PluginOptions {
  readonly registryDir: string;
  readonly pluginsDir: string;
  readonly preparer: ClaimPreparer;
  readonly logger?: Logger;
}

function serviceOf(definition: ReturnType<typeof loadPackageDefinition>, fullName: string): ServiceDefinition {
  let node: unknown = definition;
  for (const part of fullName.split('.')) node = (node as Record<string, unknown>)[part];
  return (node as { service: ServiceDefinition }).service;
}

function claimsOf(request: unknown): ClaimReference[] {
  const claims = (request as { claims?: unknown }).claims;
  if (!Array.isArray(claims)) return [];
  return claims.map((c: { namespace?: string; name?: string; uid?: string }) => ({
    namespace: c.namespace ?? '',
    name: c.name ?? '',
    uid: c.uid ?? '',
  }));
}

type Unary = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

/** A handler that answers an unexpected failure with INTERNAL instead of leaving the call hanging. */
function unary(work: (request: unknown) => Promise<unknown> | unknown, logger: Logger, method: string): Unary {
  return (call, callback) => {
    Promise.resolve()
      .then(() => work(call.request))
      .then(
        (response) => callback(null, response),
        (error: Error) => {
          logger.error({ method, err: error.message }, 'kubelet plugin call failed');
          callback({ code: grpcStatus.INTERNAL, details: error.message });
        },
      );
  };
}

async function listen(server: Server, socket: string): Promise<void> {
  await mkdir(path.dirname(socket), { recursive: true });
  // A socket left by a previous run would make bind fail with EADDRINUSE.
  await removeFile(socket);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
}

/**
 * Serves one driver. The DRA socket is up before the registration socket appears, so the kubelet
 * never learns an endpoint that does not answer yet. `close` removes the registration socket first
 * (the kubelet then deregisters the plugin), then stops both servers.
 */
export async function startKubeletPlugin(options: PluginOptions): Promise<RunningPlugin> {
  const logger = options.logger ?? SILENT_LOGGER;
  const { preparer } = options;
  const driver = preparer.driver;
  const paths = pluginPaths(driver, options.registryDir, options.pluginsDir);
  let registered: boolean | undefined;
  let registrationError: string | undefined;

  const dra = new Server();
  dra.addService(serviceOf(loadPackageDefinition(draDefinition()), DRA_SERVICE), {
    NodePrepareResources: unary(
      async (request) => ({ claims: await preparer.prepare(claimsOf(request)) }),
      logger,
      'NodePrepareResources',
    ),
    NodeUnprepareResources: unary(
      async (request) => ({ claims: await preparer.unprepare(claimsOf(request)) }),
      logger,
      'NodeUnprepareResources',
    ),
  } satisfies UntypedServiceImplementation);
  let health: readonly DeviceHealthWire[] | undefined;
  const watchers = new Set<ServerWritableStream<unknown, unknown>>();
  dra.addService(serviceOf(loadPackageDefinition(draHealthDefinition()), DRA_HEALTH_SERVICE), {
    NodeWatchResources: (call: ServerWritableStream<unknown, unknown>) => {
      watchers.add(call);
      const forget = () => watchers.delete(call);
      call.on('cancelled', forget);
      call.on('close', forget);
      call.on('error', forget);
      if (health) call.write({ devices: health });
    },
  } satisfies UntypedServiceImplementation);
  await listen(dra, paths.draSocket);

  const registration = new Server();
  registration.addService(serviceOf(loadPackageDefinition(registrationDefinition()), REGISTRATION_SERVICE), {
    GetInfo: unary(
      () => ({
        type: DRA_PLUGIN_TYPE,
        name: driver,
        endpoint: paths.draSocket,
        // The DRA service first: the kubelet takes the first entry it knows as the service to call.
        supported_versions: [DRA_SERVICE_VERSION, DRA_HEALTH_SERVICE],
      }),
      logger,
      'GetInfo',
    ),
    NotifyRegistrationStatus: unary(
      (request) => {
        const r = request as { plugin_registered?: boolean; error?: string };
        registered = r.plugin_registered === true;
        registrationError = r.error || undefined;
        if (registered) logger.info({ driver, endpoint: paths.draSocket }, 'registered with the kubelet');
        else logger.error({ driver, err: registrationError }, 'the kubelet refused the registration');
        return {};
      },
      logger,
      'NotifyRegistrationStatus',
    ),
  } satisfies UntypedServiceImplementation);
  try {
    await listen(registration, paths.registrationSocket);
  } catch (error) {
    dra.forceShutdown();
    throw error;
  }
  logger.info({ driver, ...paths }, 'kubelet plugin serving');

  return {
    status: () => ({
      driver,
      registrationSocket: paths.registrationSocket,
      draSocket: paths.draSocket,
      serving: existsSync(paths.registrationSocket) && existsSync(paths.draSocket),
      ...(registered !== undefined ? { registered } : {}),
      ...(registrationError !== undefined ? { registrationError } : {}),
    }),
    setHealth: (devices) => {
      health = devices;
      for (const call of watchers) call.write({ devices });
    },
    close: async () => {
      await removeFile(paths.registrationSocket).catch(() => false);
      for (const call of watchers) call.end();
      watchers.clear();
      await Promise.all(
        [registration, dra].map((server) => new Promise<void>((resolve) => server.tryShutdown(() => resolve()))),
      );
      await removeFile(paths.draSocket).catch(() => false);
    },
  };
}
