import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/** A fresh temporary directory per call, removed after the test. */
export function tempDir(prefix = "imem-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
