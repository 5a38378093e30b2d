// The learning README names every evolution key of the config schema and no others.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";

const README = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../core/learning/README.md");

function leaves(o: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? leaves(v as Record<string, unknown>, `${prefix}.${k}`) : [`${prefix}.${k}`],
  );
}

describe("core/learning/README.md, skills that evolve", () => {
  it("quotes the evolution keys of the schema and no others", () => {
    // file names (`evolution.ts`) are not keys
    const text = readFileSync(README, "utf8");
    const named = new Set([...text.matchAll(/`(evolution(?:\.\w+)+)`/g)].map((m) => m[1]!).filter((k) => !k.endsWith(".ts")));
    const schema = leaves(defaultConfig().evolution as unknown as Record<string, unknown>, "evolution");
    expect([...named].filter((k) => !schema.includes(k))).toEqual([]);
    expect(schema.filter((k) => !named.has(k))).toEqual([]);
  });
});
