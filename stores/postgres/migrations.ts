// Every PostgreSQL migration step, in one list: the memory side (versions 1–99,
// schema-memory.ts) and the catalog side (100–199, schema-catalog.ts).
import { CATALOG_MIGRATIONS } from "./schema-catalog.js";
import { MEMORY_MIGRATIONS } from "./schema-memory.js";
import type { PgMigration } from "./migrate.js";

export const PG_MIGRATIONS: PgMigration[] = [...MEMORY_MIGRATIONS, ...CATALOG_MIGRATIONS];
