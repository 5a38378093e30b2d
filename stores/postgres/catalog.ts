// The catalog-side PostgreSQL stores (RAP state, traces, skills, learning, evolution) over one
// pool; stores/postgres/backend.ts adds the memory side to make a whole Backend.
import type { Pool } from "pg";
import type { Backend } from "../backend.js";
import { PgEvolutionStore } from "./evolution-store.js";
import { PgLearningStore } from "./learning-store.js";
import { PgRapJournal } from "./rap-journal.js";
import { PgRapOutbox } from "./rap-outbox.js";
import { PgRapUserChoices } from "./rap-user-choices.js";
import { PgSkillStore } from "./skill-store.js";
import { PgTraceFeed } from "./trace-feed.js";
import { PgDb } from "./pool.js";
import { POSTGRES_FLAVOR, type PgFlavor } from "./rows.js";
import { PgTraceStore } from "./trace-store.js";

export type CatalogStores = Pick<Backend, "journal" | "outbox" | "userChoices" | "traces" | "traceFeed" | "skills" | "learning" | "evolution">;

/** `db`: an opened PgDb (its profile decides the DSQL workarounds), or a bare pool (PostgreSQL). */
export function pgCatalogStores(db: PgDb | Pool): CatalogStores {
  const pool = db instanceof PgDb ? db.pool : db;
  const f: PgFlavor = db instanceof PgDb && db.profile === "dsql" ? { dsql: true, ids: db.rowIds } : POSTGRES_FLAVOR;
  return {
    journal: new PgRapJournal(pool, f),
    outbox: new PgRapOutbox(pool, f),
    userChoices: new PgRapUserChoices(pool),
    traces: new PgTraceStore(pool, f),
    traceFeed: new PgTraceFeed(pool),
    skills: new PgSkillStore(pool, f),
    learning: new PgLearningStore(pool, f),
    evolution: new PgEvolutionStore(pool, f),
  };
}
