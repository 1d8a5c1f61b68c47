#!/usr/bin/env node
/**
 * @module `gpustack-operator`: one binary — `serve` (the hook server), `render` (the whole chain
 * offline for a node dump), `agent` (the node agent), `detect` (one detection, by hand),
 * `admission` (the per-card admission check; also inside `serve --admission`), `cards` (every
 * card of a cluster) and `why` (why a Workload is not admitted). Installed as `kubectl-gpustack` too: `kubectl gpustack cards` runs it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './errors.js';
import { USAGE, commandUsage } from './help.js';
import { renderCommand } from './render.js';
import { serveCommand } from './serve.js';

/** `gpustack-operator <version>` from the package.json above this file (in the repository and the image). */
function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpustack-operator' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

/** `-o=json` → `-o json`: parseArgs reads `=json` as the value of a short flag. */
function normalizeShortFlags(args: readonly string[]): string[] {
  return args.flatMap((arg) => {
    const match = /^-([A-Za-z])=(.*)$/.exec(arg);
    return match ? [`-${match[1]}`, match[2] as string] : [arg];
  });
}

/** A command's exit code, where it has one of its own (an unconfirmed `cards cordon --drain`: 1); else 0. */
type Command = (args: string[]) => Promise<number | void> | number | void;

// Loaded on demand: the Kubernetes client and the addon loader are not needed to serve or render.
const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  render: renderCommand,
  agent: async (args) => (await import('./agent.js')).agentCommand(args),
  detect: async (args) => (await import('./detect.js')).detectCommand(args),
  admission: async (args) => (await import('./admission.js')).admissionCommand(args),
  cards: async (args) => {
    const [verb, ...rest] = args;
    if (verb === 'cordon' || verb === 'uncordon') return (await import('./cordon.js')).cordonCommand(verb, rest);
    return (await import('./cards.js')).cardsCommand(args);
  },
  'kueue-config': async (args) => (await import('./kueue-config.js')).kueueConfigCommand(args),
  why: async (args) => (await import('./why.js')).whyCommand(args),
};

/** One line for an error a person can act on; the stack of anything else only with GPUSTACK_DEBUG. */
function describeFailure(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (code === 'EADDRINUSE') {
    const { address, port } = error as { address?: string; port?: number };
    return `cannot listen on ${address ?? ''}:${port ?? ''}: the port is in use (choose another with --port)`;
  }
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen')
    return `cannot listen: ${message} (ports below 1024 need privileges)`;
  return message;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...raw] = argv;
  const rest = normalizeShortFlags(raw);
  if (command === '--version' || command === 'version' || command === '-v') {
    process.stdout.write(`gpustack-operator ${packageVersion()}\n`);
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`error: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandUsage(command));
    return 0;
  }
  try {
    const code = await run(rest);
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(error as Error).message}\n\n${commandUsage(command)}`);
      return 2;
    }
    process.stderr.write(`error: ${describeFailure(error)}\n`);
    if (process.env['GPUSTACK_DEBUG'] && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
