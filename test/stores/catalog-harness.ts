// What the catalog conformance suites (RAP journal/outbox/user choices, traces, learning, skills,
// evolution) run against: a factory of empty databases, each openable several times so that two
// handles (two pools, two connections) can race on the same rows.
import { afterEach } from "vitest";
import type { Backend } from "../../stores/backend.js";

export type CatalogHandle = Pick<Backend, "journal" | "outbox" | "userChoices" | "traces" | "traceFeed" | "skills" | "learning" | "evolution"> & {
  close(): Promise<void>;
};

export interface CatalogDb {
  open(): Promise<CatalogHandle>;
  drop(): Promise<void>;
}

export type CatalogFactory = () => Promise<CatalogDb>;

/** Per-test databases and handles, closed and dropped after each test. */
export function useCatalog(factory: CatalogFactory) {
  const handles: CatalogHandle[] = [];
  const dbs: CatalogDb[] = [];
  afterEach(async () => {
    for (const h of handles.splice(0)) await h.close();
    for (const d of dbs.splice(0)) await d.drop();
  });
  return {
    /** one handle on a new empty database */
    async fresh(): Promise<CatalogHandle> {
      return (await this.freshPair(1))[0]!;
    },
    /** n handles on one new empty database */
    async freshPair(n = 2): Promise<CatalogHandle[]> {
      const db = await factory();
      dbs.push(db);
      const out: CatalogHandle[] = [];
      for (let i = 0; i < n; i++) {
        const h = await db.open();
        handles.push(h);
        out.push(h);
      }
      return out;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
