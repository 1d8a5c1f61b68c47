/**
 * @module The child process of detectIsolated() (native/isolation.ts). Its one argument is the
 * request, `{"manufacturers": [...], "hostRoot": "..."}`; it detects the manufacturers one at a
 * time and after each writes `R<DetectResult JSON>\0` to fd 3, where the addon also writes
 * `L<library>\0` before each dlopen(). Whatever a library does to this process, the parent
 * knows which manufacturer and which file it was on.
 */
import { writeSync } from 'node:fs';

import { _detectInChild } from './index.js';

const REPORT_FD = 3;

const request = JSON.parse(process.argv.at(-1) ?? '') as { manufacturers: unknown[]; hostRoot: unknown };
for (const manufacturer of request.manufacturers) {
  const result = await _detectInChild({ manufacturers: [manufacturer], hostRoot: request.hostRoot }, REPORT_FD);
  writeSync(REPORT_FD, `R${JSON.stringify(result)}\0`);
}
