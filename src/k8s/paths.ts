/** Renders a schema issue path the way a user reads it: `related.Node.v1.gpu-1.metadata.labels`, `items[2].metadata`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return (
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
      .join('.')
      .replace(/\.\[/g, '[') || '(body)'
  );
}
