// The learning README names config keys, never their values: every key it names exists in the
// schema, and every leaf of config.learning is named there.
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

describe("core/learning/README.md", () => {
  it("quotes the config schema's keys and no others", () => {
    const text = readFileSync(README, "utf8");
    const named = new Set([...text.matchAll(/`(learning(?:\.\w+)+)`/g)].map((m) => m[1]!));
    const schema = leaves(defaultConfig().learning as unknown as Record<string, unknown>, "learning");
    expect([...named].filter((k) => !schema.includes(k))).toEqual([]);
    expect(schema.filter((k) => !named.has(k))).toEqual([]);
  });
});
