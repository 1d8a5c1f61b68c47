/**
 * @module Files the plugin owns: atomic writes (a reader — the container runtime watching the CDI
 * folder, or this process after a restart — sees the old file or the new one, never half of one)
 * and removal that treats "already gone" as done.
 */
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Writes `text` to a dot-named temporary file beside `file`, fsyncs it and renames it over `file`. */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  // A dot name with another extension: CDI readers only pick up *.json and *.yaml.
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const handle = await open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
}

/** Removes a file; true when it was there. */
export async function removeFile(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
