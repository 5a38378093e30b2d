// Where a worker thread's compiled module is: beside this one in the build, and under vitest
// (TypeScript sources) the build's copy, which `npm test` makes first.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The compiled module `name` of stores/sqlite, or null when there is none (the caller runs in-thread). */
export function workerScript(name: string): URL | null {
  const here = new URL(import.meta.url);
  for (const candidate of [new URL(`./${name}`, here), new URL(`../../dist/stores/sqlite/${name}`, here)]) {
    if (existsSync(fileURLToPath(candidate))) return candidate;
  }
  return null;
}
