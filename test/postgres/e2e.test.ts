// The end-to-end scenarios (test/e2e/scenarios.test.ts) with the memory command servers on
// PostgreSQL: `serve --db postgres://…`, a fresh database per scenario. The setup module runs
// first (import order) and tells the scenarios where to put memory.
import "./e2e-setup.js";
import "../e2e/scenarios.test.js";
