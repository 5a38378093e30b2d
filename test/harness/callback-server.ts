// The runtime's RAP callback listener (reference §1.5, §2.4; rap-client `callback_server.rs`,
// infinity-rap-bridge `prepare_callback` / `convert_callback`). One listener on
// 127.0.0.1:0 shared by every session, thread and call; the path is ignored. Non-POST → 405
// "POST only"; an unreadable body → 400 "Failed to read body"; a body serde would reject →
// 400 "Bad request: …"; otherwise the callback is handed on (enqueued) BEFORE the 200 "OK".
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { InputMessage, ToolResultContent as RigToolResultContent } from "../../stores/infinity/messages.js";
import { RapCallback, type RapToolResult, type RapViewUpdate } from "../../toolsets/rap/wire.js";
import { decodeUtf8, isIntegerLiteral, parseStrictJson, StrictJsonError } from "./strict-json.js";

const CALLBACK_TYPES = ["tool_result", "subscription_event", "oauth", "user_choice", "view_update"] as const;

/** A callback as agent input (with its input-queue dedup id) or as a display-only view update. */
export type CallbackDelivery = { kind: "input"; message: InputMessage; dedupId: string } | { kind: "view_update"; update: RapViewUpdate };

/** `ImageMediaType::from_mime_type`; an unknown MIME type becomes None (field omitted). */
function imageMediaType(mime: string): string | null {
  const map: Record<string, string> = {
    "image/jpeg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/heic": "heic",
    "image/heif": "heif",
    "image/svg+xml": "svg",
  };
  return Object.hasOwn(map, mime) ? map[mime]! : null;
}

/** `tool_result_content`: a non-empty `content` wins, else `text`, else "". */
function toolResultContent(tr: RapToolResult): RigToolResultContent[] {
  if (tr.content && tr.content.length > 0) {
    return tr.content.map((item): RigToolResultContent => {
      if (item.type === "text") return { type: "text", text: item.text };
      const mediaType = imageMediaType(item.mediaType);
      return mediaType === null
        ? { type: "image", data: { type: "base64", value: item.data } }
        : { type: "image", data: { type: "base64", value: item.data }, media_type: mediaType };
    });
  }
  return [{ type: "text", text: tr.text ?? "" }];
}

/** `convert_callback`: null for view updates (not agent input). */
export function convertCallback(cb: RapCallback): InputMessage | null {
  switch (cb.type) {
    case "tool_result": {
      const result: Record<string, unknown> = { type: "toolresult", id: cb.id };
      if (cb.call_id !== undefined && cb.call_id !== null) result.call_id = cb.call_id;
      result.content = toolResultContent(cb);
      return {
        content: result as InputMessage["content"],
        group_id: cb.group_id,
        metadata: null,
        synthetic: null,
        display_as: cb.display_as ?? null,
        subscription: cb.subscription ?? false,
      };
    }
    case "subscription_event":
      return {
        content: { type: "toolresult", id: cb.tool_call_id, content: [{ type: "text", text: cb.text }] },
        group_id: cb.group_id,
        metadata: null,
        synthetic: { type: "subscription_event", tool_call_id: cb.tool_call_id, associative: cb.associative, final: cb.final ?? false },
        display_as: null,
        subscription: false,
      };
    case "oauth":
      return {
        content: { type: "oauth_required", id: cb.id, call_id: cb.call_id ?? null, auth_url: cb.auth_url },
        group_id: cb.group_id,
        metadata: null,
        synthetic: null,
        display_as: null,
        subscription: false,
      };
    case "user_choice":
      return {
        content: {
          type: "user_choice_required",
          id: cb.id,
          call_id: cb.call_id ?? null,
          prompt: cb.prompt,
          choices: [...cb.choices],
          default: cb.default,
          response_url: cb.response_url,
        },
        group_id: cb.group_id,
        metadata: null,
        synthetic: null,
        display_as: null,
        subscription: false,
      };
    case "view_update":
      return null;
  }
}

/** `prepare_callback`: the dedup ids of §1.5; subscription events get a fresh UUID each. */
export function prepareCallback(cb: RapCallback): CallbackDelivery {
  if (cb.type === "view_update") return { kind: "view_update", update: cb };
  const dedupId =
    cb.type === "tool_result"
      ? `rap-tool-result-${cb.id}`
      : cb.type === "oauth"
        ? `rap-oauth-${cb.id}`
        : cb.type === "user_choice"
          ? `rap-user-choice-${cb.id}`
          : crypto.randomUUID();
  return { kind: "input", message: convertCallback(cb)!, dedupId };
}

/** Parse a callback body as serde would, or throw with the reason (the text after "Bad request: "). */
export function parseCallbackBody(body: Uint8Array): RapCallback {
  let parsed: ReturnType<typeof parseStrictJson>;
  try {
    parsed = parseStrictJson(decodeUtf8(body));
  } catch (e) {
    throw new StrictJsonError((e as Error).message);
  }
  const value = parsed.value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new StrictJsonError("invalid type: expected internally tagged enum RapCallback");
  }
  const type = (value as { type?: unknown }).type;
  if (type === undefined) throw new StrictJsonError("missing field `type`");
  if (typeof type !== "string" || !(CALLBACK_TYPES as readonly string[]).includes(type)) {
    throw new StrictJsonError(`unknown variant \`${String(type)}\`, expected one of ${CALLBACK_TYPES.map((t) => `\`${t}\``).join(", ")}`);
  }
  if (type === "user_choice") {
    const raw = parsed.topLevelNumbers.get("default");
    if (raw !== undefined && !isIntegerLiteral(raw)) throw new StrictJsonError(`invalid type: floating point \`${raw}\`, expected usize`);
  }
  const r = RapCallback.safeParse(value);
  if (!r.success) {
    throw new StrictJsonError(r.error.issues.map((i) => `${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`).join("; "));
  }
  return r.data;
}

export interface CallbackRequestRecord {
  method: string;
  path: string;
  status: number;
  /** the reply body */
  reply: string;
  /** the request body as text (lossy for invalid UTF-8) */
  body: string;
}

export interface CallbackServerHandle {
  /** `http://127.0.0.1:{port}`, no path: what invocations carry as `callback_url` */
  url: string;
  port: number;
  /** every request received, in arrival order */
  requests: CallbackRequestRecord[];
  close(): Promise<void>;
}

/**
 * Start the listener. `handler` runs for every accepted callback and is awaited before the
 * 200 is sent, so the input is queued by the time the tool server sees its reply.
 */
export async function startCallbackServer(handler: (cb: RapCallback) => void | Promise<void>): Promise<CallbackServerHandle> {
  const requests: CallbackRequestRecord[] = [];
  const server: Server = createServer((req, res) => {
    const record = (status: number, reply: string, body: string) => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", status, reply, body });
      // hyper's reply: status and body, no content-type
      res.writeHead(status, { "content-length": Buffer.byteLength(reply) });
      res.end(reply);
    };
    if (req.method !== "POST") {
      req.resume();
      record(405, "POST only", "");
      return;
    }
    const chunks: Buffer[] = [];
    let failed = false;
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => {
      if (failed) return;
      failed = true;
      record(400, "Failed to read body", "");
    });
    req.on("end", () => {
      if (failed) return;
      const bytes = Buffer.concat(chunks);
      const text = bytes.toString("utf8");
      let cb: RapCallback;
      try {
        cb = parseCallbackBody(bytes);
      } catch (e) {
        record(400, `Bad request: ${(e as Error).message}`, text);
        return;
      }
      Promise.resolve()
        .then(() => handler(cb))
        .then(
          () => record(200, "OK", text),
          // The daemon's handler cannot fail; a harness bug must still not hang the tool server.
          (e: unknown) => record(500, `harness callback handler failed: ${(e as Error).message}`, text),
        );
    });
  });
  server.on("clientError", (_e, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
