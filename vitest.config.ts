import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // a throwaway PostgreSQL cluster for the PostgreSQL suites (skipped with a reason when absent)
    globalSetup: ["test/helpers/pg-cluster.ts"],
  },
});
