// The catalog conformance suites on SQLite (the reference engine): two handles are two
// connections to one database file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteBackend } from "../../stores/sqlite/backend.js";
import { catalogConformance } from "./catalog-conformance.js";

catalogConformance("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "imem-catalog-"));
  const path = join(dir, "catalog.sqlite");
  return {
    open: async () => openSqliteBackend(path),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
