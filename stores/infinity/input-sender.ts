// In-process InputSender for the mock harness: checks each message against the daemon's
// InputMessage shape, records it, and forwards it to a handler (the harness's input queue).
import { InfinityStoreError } from "./errors.js";
import { InputMessage, type InputMessageInit } from "./messages.js";
import type { InputSender } from "./traits.js";

export type InputHandler = (message: InputMessage, dedupId: string) => void | Promise<void>;

export interface SentInput {
  message: InputMessage;
  dedupId: string;
}

export class MemoryInputSender implements InputSender {
  private readonly log: SentInput[] = [];

  /** without a handler the sender only records (tests read `sent`) */
  constructor(private readonly handler?: InputHandler) {}

  /** Accepts the init shape too: serde-defaulted fields are filled in as the daemon would. */
  async sendToInputQueue(message: InputMessage | InputMessageInit, dedupId: string): Promise<void> {
    const parsed = InputMessage.safeParse(message);
    if (!parsed.success) {
      throw new InfinityStoreError(
        "invalid_message",
        `input ${dedupId} is not an InputMessage: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      );
    }
    this.log.push({ message: parsed.data, dedupId });
    await this.handler?.(parsed.data, dedupId);
  }

  /** everything sent so far, oldest first */
  get sent(): readonly SentInput[] {
    return this.log;
  }

  /** hand over and forget what was sent so far */
  drain(): SentInput[] {
    return this.log.splice(0, this.log.length);
  }
}
