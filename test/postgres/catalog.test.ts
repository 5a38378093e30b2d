// The catalog conformance suites (RAP journal/outbox/user choices, traces, learning, skills,
// evolution) on PostgreSQL: two handles are two connection pools on one database.
import { openPg } from "../../stores/postgres/setup.js";
import { pgCatalogStores } from "../../stores/postgres/catalog.js";
import { catalogConformance } from "../stores/catalog-conformance.js";
import { describePg } from "../helpers/postgres.js";
import { migratedTemplate } from "./pg-databases.js";

describePg("postgres", (url) => {
  const dbs = migratedTemplate(url);
  catalogConformance("postgres", async () => {
    const d = await dbs.fresh();
    return {
      open: async () => {
        const db = await openPg(d.url, { max: 4 });
        return { ...pgCatalogStores(db), close: () => db.close() };
      },
      drop: d.drop,
    };
  });
});
