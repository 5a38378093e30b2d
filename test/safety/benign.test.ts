import { describe, expect, it } from "vitest";
import { scanContent } from "../../core/safety/index.js";
import { BENIGN_CASES } from "./corpus-benign.js";

describe("benign corpus", () => {
  it("has at least 150 cases", () => {
    expect(BENIGN_CASES.length).toBeGreaterThanOrEqual(150);
  });

  it.each(BENIGN_CASES.map((text) => [text.slice(0, 70).replace(/\n/g, "\\n"), text] as const))("ok: %s", (_label, text) => {
    const scan = scanContent(text);
    expect({ verdict: scan.verdict, secrets: scan.secrets, injections: scan.injections }).toEqual({
      verdict: "ok",
      secrets: [],
      injections: [],
    });
    expect(scan.reason).toBe("no credentials or injection patterns found");
  });
});
