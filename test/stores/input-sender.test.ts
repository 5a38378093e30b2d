import { describe, expect, it } from "vitest";
import { MemoryInputSender } from "../../stores/infinity/input-sender.js";
import type { InputMessage } from "../../stores/infinity/messages.js";

describe("MemoryInputSender", () => {
  it("records, fills serde defaults and forwards in order", async () => {
    const forwarded: [InputMessage, string][] = [];
    const sender = new MemoryInputSender((m, id) => {
      forwarded.push([m, id]);
    });
    await sender.sendToInputQueue({ content: { type: "text", text: "hello" }, group_id: "t1" }, "in-1");
    await sender.sendToInputQueue(
      {
        content: { type: "toolresult", id: "tc-sub", content: [{ type: "text", text: "tick" }] },
        group_id: "t1",
        synthetic: { type: "subscription_event", tool_call_id: "tc-sub", associative: true },
      },
      "tc-sub-1",
    );
    expect(forwarded.map(([, id]) => id)).toEqual(["in-1", "tc-sub-1"]);
    expect(forwarded[0]![0]).toEqual({
      content: { type: "text", text: "hello" },
      group_id: "t1",
      metadata: null,
      synthetic: null,
      display_as: null,
      subscription: false,
    });
    expect(forwarded[1]![0].synthetic).toEqual({ type: "subscription_event", tool_call_id: "tc-sub", associative: true, final: false });
    expect(sender.sent.map((s) => s.dedupId)).toEqual(["in-1", "tc-sub-1"]);
    expect(sender.drain()).toHaveLength(2);
    expect(sender.sent).toEqual([]);
  });

  it("rejects a malformed message without recording or forwarding it", async () => {
    let calls = 0;
    const sender = new MemoryInputSender(() => {
      calls++;
    });
    await expect(
      sender.sendToInputQueue({ content: { type: "text" }, group_id: "t1" } as unknown as InputMessage, "bad"),
    ).rejects.toMatchObject({ code: "invalid_message" });
    expect(sender.sent).toEqual([]);
    expect(calls).toBe(0);
  });

  it("passes a handler failure back to the sender", async () => {
    const sender = new MemoryInputSender(() => {
      throw new Error("queue full");
    });
    await expect(sender.sendToInputQueue({ content: { type: "text", text: "x" }, group_id: "t" }, "d")).rejects.toThrow("queue full");
  });
});
