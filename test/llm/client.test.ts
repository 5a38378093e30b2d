// The shared client through the scripted fake: ops, structured output and its one repair,
// timeouts and cancellation. The fake is also what other suites use, so it is tested here.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createFakeLlm } from "../../core/llm/fake.js";
import { noneLlm } from "../../core/llm/none.js";
import { extractJson } from "../../core/llm/structured.js";
import { isLlmError, LlmError, type LlmCall } from "../../core/llm/types.js";

const Verdict = z.object({ verdict: z.enum(["pass", "fail"]), reasons: z.array(z.string()).min(1) });

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof LlmError)) throw new Error(`expected an LlmError, got ${String(e)}`);
  return e;
}

describe("fake llm", () => {
  it("answers per op, in order, repeating the last, and records every call", async () => {
    const llm = createFakeLlm({ summarize: ["one", "two"], judge: "always" });
    expect((await llm.complete({ op: "summarize", system: "be brief", prompt: "p1", maxTokens: 50 })).text).toBe("one");
    expect((await llm.complete({ op: "judge", prompt: "j" })).value).toBe("always");
    expect((await llm.complete({ op: "summarize", prompt: "p2" })).text).toBe("two");
    expect((await llm.complete({ op: "summarize", prompt: "p3" })).text).toBe("two");
    expect(llm.calls.map((c) => c.op)).toEqual(["summarize", "judge", "summarize", "summarize"]);
    expect(llm.callsFor("summarize")[0]).toEqual({ op: "summarize", system: "be brief", prompt: "p1", maxTokens: 50 });
    const r = await llm.complete({ op: "judge", prompt: "x" });
    expect(r).toMatchObject({ adapter: "fake", op: "judge", calls: 1, usage: null });
  });

  it("runs functions with the call and its index, and throws scripted errors", async () => {
    const llm = createFakeLlm({
      echo: (call: LlmCall, n: number) => ({ text: `${n}:${call.prompt}`, usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }),
      broken: new LlmError("upstream", "scripted outage"),
    });
    const r = await llm.complete({ op: "echo", prompt: "hi" });
    expect(r.text).toBe("0:hi");
    expect(r.usage).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });
    expect((await llm.complete({ op: "echo", prompt: "again" })).text).toBe("1:again");
    expect((await failure(llm.complete({ op: "broken", prompt: "x" }))).code).toBe("upstream");
  });

  it("fails an unscripted op as unavailable, and script() adds ops later", async () => {
    const llm = createFakeLlm();
    const e = await failure(llm.complete({ op: "draft_skill", prompt: "x" }));
    expect(e.code).toBe("unavailable");
    expect(e.message).toContain("draft_skill");
    llm.script({ draft_skill: "ok" });
    expect((await llm.complete({ op: "draft_skill", prompt: "x" })).text).toBe("ok");
  });

  it("the none adapter is always unavailable", async () => {
    const e = await failure(noneLlm.complete({ op: "summarize", prompt: "x" }));
    expect(e.code).toBe("unavailable");
    expect(isLlmError(e, "unavailable")).toBe(true);
    expect(noneLlm.adapter).toBe("none");
  });
});

describe("json extraction", () => {
  it("prefers a fenced json block, then the first balanced object or array", () => {
    expect(extractJson('Sure:\n```json\n{"a": 1}\n```\nand {"b": 2}')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('```\n[1, 2]\n```')).toEqual({ ok: true, value: [1, 2] });
    expect(extractJson('```python\nx = {"no": 1}\n```')).toEqual({ ok: true, value: { no: 1 } });
    expect(extractJson('The answer is {"s": "a } in a string \\" quote", "n": [1, {"m": 2}]} as asked.')).toEqual({
      ok: true,
      value: { s: 'a } in a string " quote', n: [1, { m: 2 }] },
    });
    // an unparsable candidate is skipped for the next one
    expect(extractJson('{not json} then {"ok": true}')).toEqual({ ok: true, value: { ok: true } });
    expect(extractJson("no json here").ok).toBe(false);
    expect(extractJson('{"open": ').ok).toBe(false);
  });
});

describe("structured output", () => {
  it("parses and validates the answer, telling the model the schema", async () => {
    const llm = createFakeLlm({ judge: 'Here you go:\n```json\n{"verdict":"pass","reasons":["tests green"]}\n```' });
    const r = await llm.complete({ op: "judge", prompt: "Did it work?", schema: Verdict });
    expect(r.value).toEqual({ verdict: "pass", reasons: ["tests green"] });
    expect(r.calls).toBe(1);
    const prompt = llm.calls[0]!.prompt;
    expect(prompt.startsWith("Did it work?")).toBe(true);
    expect(prompt).toContain("JSON");
    expect(prompt).toContain('"verdict"');
  });

  it("repairs once with the validation errors, and the repaired value wins", async () => {
    const llm = createFakeLlm(
      { judge: ['{"verdict":"maybe","reasons":[]}', '{"verdict":"fail","reasons":["flaky"]}'] },
      { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
    );
    const r = await llm.complete({ op: "judge", prompt: "Did it work?", schema: Verdict });
    expect(r.value).toEqual({ verdict: "fail", reasons: ["flaky"] });
    expect(r.calls).toBe(2);
    expect(r.usage).toEqual({ inputTokens: 20, outputTokens: 10, totalTokens: 30 });
    const repair = llm.calls[1]!.prompt;
    expect(repair).toContain('{"verdict":"maybe","reasons":[]}');
    expect(repair).toContain("verdict");
    expect(repair).toContain("reasons");
    expect(repair).toMatch(/corrected JSON only/);
  });

  it("repairs an answer without any JSON", async () => {
    const llm = createFakeLlm({ judge: ["I think it passed.", '{"verdict":"pass","reasons":["ok"]}'] });
    const r = await llm.complete({ op: "judge", prompt: "?", schema: Verdict });
    expect(r.value.verdict).toBe("pass");
    expect(llm.calls[1]!.prompt).toContain("no JSON");
  });

  it("fails with invalid_output and the issues when the repair is invalid too", async () => {
    const llm = createFakeLlm({ judge: ['{"verdict":"maybe"}', '{"verdict":"pass","reasons":"one"}', "never asked"] });
    const e = await failure(llm.complete({ op: "judge", prompt: "?", schema: Verdict }));
    expect(e.code).toBe("invalid_output");
    expect(e.op).toBe("judge");
    expect(e.issues?.map((i) => i.path.join("."))).toEqual(["reasons"]);
    expect(llm.calls).toHaveLength(2);
  });

  it("applies schema transforms to the value", async () => {
    const llm = createFakeLlm({ count: '{"n":"41"}' });
    const schema = z.object({ n: z.string().transform((s) => Number(s) + 1) });
    expect((await llm.complete({ op: "count", prompt: "?", schema })).value).toEqual({ n: 42 });
  });
});

describe("deadlines and cancellation", () => {
  /** an answer that only ends when the call is aborted, and reports that it saw the abort */
  function hanging(seen: { aborted?: unknown }) {
    return (call: LlmCall) =>
      new Promise<string>((_, reject) => {
        call.signal.addEventListener("abort", () => {
          seen.aborted = call.signal.reason;
          reject(new Error("adapter saw the abort"));
        });
      });
  }

  it("times out with code timeout and aborts the adapter's signal", async () => {
    const seen: { aborted?: unknown } = {};
    const llm = createFakeLlm({ slow: hanging(seen) }, { timeoutMs: 5000 });
    const t0 = performance.now();
    const e = await failure(llm.complete({ op: "slow", prompt: "x", timeoutMs: 80 }));
    expect(e.code).toBe("timeout");
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(isLlmError(seen.aborted, "timeout")).toBe(true);
  });

  it("uses the client's default deadline", async () => {
    const llm = createFakeLlm({ slow: hanging({}) }, { timeoutMs: 60 });
    expect((await failure(llm.complete({ op: "slow", prompt: "x" }))).code).toBe("timeout");
  });

  it("returns on time even when the adapter ignores the signal", async () => {
    const llm = createFakeLlm({ deaf: () => new Promise<string>((r) => setTimeout(() => r("late"), 3000)) });
    const t0 = performance.now();
    expect((await failure(llm.complete({ op: "deaf", prompt: "x", timeoutMs: 50 }))).code).toBe("timeout");
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("cancels on the caller's signal, and refuses an already aborted one without calling", async () => {
    const seen: { aborted?: unknown } = {};
    const llm = createFakeLlm({ slow: hanging(seen) });
    const ac = new AbortController();
    const p = llm.complete({ op: "slow", prompt: "x", signal: ac.signal });
    setTimeout(() => ac.abort(new Error("user pressed stop")), 30);
    const e = await failure(p);
    expect(e.code).toBe("cancelled");
    expect(isLlmError(seen.aborted, "cancelled")).toBe(true);

    const before = llm.calls.length;
    expect((await failure(llm.complete({ op: "slow", prompt: "x", signal: AbortSignal.abort() }))).code).toBe("cancelled");
    expect(llm.calls.length).toBe(before);
  });
});
