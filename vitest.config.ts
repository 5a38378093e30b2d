import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // the command-line suites start dozens of processes a test (~15 s on an idle 2-core machine, near
    // 30 s on a loaded one)
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // a throwaway PostgreSQL cluster for the PostgreSQL suites (skipped with a reason when absent)
    globalSetup: ["test/helpers/pg-cluster.ts"],
  },
});
