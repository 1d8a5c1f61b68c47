// The installed packages (under node_modules/) that some packages need at run time: their
// dependencies and the optional ones this machine installed (a platform's native binding),
// transitively; peers and development dependencies are left out. One name per line, sorted.
// Usage (Node.js 24, which runs TypeScript): node scripts/real-card/closure.ts <package>...
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface Manifest {
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

function closure(roots: readonly string[], modules: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const manifest = path.join(modules, name, 'package.json');
    // An optional dependency for another platform is not installed: nothing to carry.
    if (seen.has(name) || !existsSync(manifest)) return;
    seen.add(name);
    const { dependencies = {}, optionalDependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as Manifest;
    for (const dependency of Object.keys({ ...dependencies, ...optionalDependencies })) visit(dependency);
  };
  for (const root of roots) visit(root);
  return [...seen].sort();
}

process.stdout.write(`${closure(process.argv.slice(2), 'node_modules').join('\n')}\n`);
