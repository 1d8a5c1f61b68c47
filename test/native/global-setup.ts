// Builds the addon and the fake vendor libraries once per test run (harness/native/build.ts).
import { buildNativeAndFakes } from '../../harness/native/build.js';

export default function setup(): void {
  buildNativeAndFakes();
}
