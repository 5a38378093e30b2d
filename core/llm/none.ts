// The "none" adapter: no model is configured, so every call fails with `unavailable` and the
// caller takes its deterministic path. It consumes no budget.
import { LlmError, type Llm, type LlmRequest, type LlmResult } from "./types.js";

export const noneLlm: Llm = {
  adapter: "none",
  complete<T = string>(req: LlmRequest<T>): Promise<LlmResult<T>> {
    const message = `${req.op}: no model is configured (llm.adapter = "none")`;
    return Promise.reject(new LlmError("unavailable", message, { op: req.op }));
  },
  async close() {},
};
