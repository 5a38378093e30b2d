// What a forget must leave nowhere: every table.column of a SQLite file whose text holds a needle.
import type { Db } from "../../stores/sqlite/database.js";

/**
 * every table.column of the file whose text holds `needle` (case-insensitive), full-text shadow
 * tables included, but the runtime's own conversation and state tables, which the test worlds
 * keep in the same file (the daemon's data)
 */
export function holding(db: Db, needle: string): string[] {
  const hits: string[] = [];
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT GLOB 'conv_*' AND name NOT GLOB 'state_*'`)
    .pluck()
    .all() as string[];
  for (const t of tables) {
    for (const c of db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(t) as string[]) {
      // (a blob, such as a full-text segment, is read byte by byte: LIKE stops at its first NUL)
      const n = db
        .prepare(`SELECT count(*) FROM "${t}" WHERE CAST("${c}" AS TEXT) LIKE ? OR (typeof("${c}") = 'blob' AND instr("${c}", CAST(lower(?) AS BLOB)) > 0)`)
        .pluck()
        .get(`%${needle}%`, needle) as number;
      if (n > 0) hits.push(`${t}.${c}`);
    }
  }
  return hits.sort();
}
