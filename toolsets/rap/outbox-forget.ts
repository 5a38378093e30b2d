// A callback still waiting in the outbox (the runtime's callback server was down or failing) when
// a memory it quoted is forgotten goes out without it. Such a body sat on disk for up to a day and
// was then delivered as it was: the forgotten text reached the conversation after the forget. The
// runtime still gets an answer for the call (its thread waits for one), saying why it is empty.
// A question's own row (rap_user_choices, kept until its call finishes: after a stop, until the
// next server runs the call again) loses the quote the same way.
import type { ForgetHook } from "../../core/memory/service.js";
import { copyMatcher } from "../../core/sessions/forget-needles.js";
import type { RapOutboxStore, RapUserChoiceStore } from "../../stores/traits.js";
import { RapCallback } from "./wire.js";
import { callbackJson } from "./wire-json.js";

export const WITHHELD =
  "Error: this result quoted a memory that was forgotten before the result could be delivered, so it is withheld. " +
  "Call the tool again if you still need it.";
const WITHHELD_QUESTION = "(This question quoted a memory that has since been forgotten; its text is withheld.)";

/** The body with what it said replaced by WITHHELD; null when it is not a callback that says anything. */
export function withheld(body: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const cb = RapCallback.safeParse(parsed);
  if (!cb.success) return null;
  const c = cb.data;
  switch (c.type) {
    case "tool_result":
      return callbackJson({ type: c.type, group_id: c.group_id, id: c.id, call_id: c.call_id, text: WITHHELD, ...(c.subscription ? { subscription: true } : {}) });
    case "subscription_event":
      return callbackJson({ ...c, text: WITHHELD });
    case "user_choice":
      // the question is still asked (its tool waits for the answer), without the quote
      return callbackJson({ ...c, prompt: WITHHELD_QUESTION });
    default:
      return null;
  }
}

/** The forget cascade's step into the outbox and the questions' rows (MemoryService.onForget). */
export function outboxForgetHook(
  outbox: Pick<RapOutboxStore, "pendingMentioning" | "replacePending">,
  questions: Pick<RapUserChoiceStore, "promptsMentioning" | "replacePrompt">,
): ForgetHook {
  return {
    // Rows name no user: a body holding the exact text or the id is someone else's only by
    // coincidence, and it would lose that one delivery, nothing more.
    beforeForget: async (_user, contents) => {
      const m = copyMatcher(contents);
      if (!m) return;
      for (const row of await outbox.pendingMentioning(m.probes)) {
        if (!m.holds(row.body)) continue;
        const body = withheld(row.body);
        if (body !== null) await outbox.replacePending(row.id, body);
      }
      for (const q of await questions.promptsMentioning(m.probes)) {
        if (m.holds(q.prompt)) await questions.replacePrompt(q.toolset, q.choiceId, WITHHELD_QUESTION);
      }
    },
  };
}
