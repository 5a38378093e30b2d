// The runtime's outbound HTTP (rap-client `SimpleHttpClient` and `RapNotifier`): a POST reports
// only the status (the body is read and ignored), a GET returns status and body; no timeouts and
// no retries. A transport failure rejects with RapTransportError. Every request uses a fresh
// connection, so a server that was stopped and restarted never meets a stale pooled socket.
import { request } from "node:http";

export class RapTransportError extends Error {
  override name = "RapTransportError";
}

function send(method: "GET" | "POST", url: string, body: string | null, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new RapTransportError(`builder error: invalid URL ${JSON.stringify(url)}`));
      return;
    }
    if (target.protocol !== "http:") {
      reject(new RapTransportError(`unsupported URL scheme in ${url} (the harness speaks plain http)`));
      return;
    }
    const req = request(target, { method, headers: body === null ? headers : { ...headers, "content-length": Buffer.byteLength(body) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on("error", (e) => reject(new RapTransportError(`error reading response from ${url}: ${e.message}`)));
    });
    req.on("error", (e) => reject(new RapTransportError(`error sending request for url (${url}): ${e.message}`)));
    if (body !== null) req.write(body);
    req.end();
  });
}

/** `SimpleHttpClient::post`: `content-type: application/json`, returns the status. */
export async function postJson(url: string, body: string): Promise<number> {
  return (await send("POST", url, body, { "content-type": "application/json" })).status;
}

/** `SimpleHttpClient::get`: `accept: application/json`. */
export function getJson(url: string): Promise<{ status: number; body: Buffer }> {
  return send("GET", url, null, { accept: "application/json" });
}

/** `url.trim_end_matches('/')` */
export function trimSlashes(url: string): string {
  return url.replace(/\/+$/, "");
}

export interface NotifyRecord {
  url: string;
  body: string;
  status: number | null;
  error?: string;
}

/**
 * `RapNotifier`: a fixed list of base URLs (the servers up when the thread's config was
 * resolved), posted to one after another, each awaited; failures are only recorded.
 */
export class RapNotifier {
  constructor(
    readonly serverUrls: readonly string[],
    private readonly onNotify: (r: NotifyRecord) => void = () => undefined,
  ) {}

  private async postAll(path: string, payload: string): Promise<void> {
    for (const base of this.serverUrls) {
      const url = `${trimSlashes(base)}${path}`;
      try {
        this.onNotify({ url, body: payload, status: await postJson(url, payload) });
      } catch (e) {
        this.onNotify({ url, body: payload, status: null, error: (e as Error).message });
      }
    }
  }

  /** `{"thread_id"}` to `{base}/close_thread` */
  notifyThreadClosed(threadId: string): Promise<void> {
    return this.postAll("/close_thread", JSON.stringify({ thread_id: threadId }));
  }

  /** `{"thread_id","tool_call_id"}` (serde_json::json! sorts keys) to `{base}/cancel_tool_call` */
  notifyToolCancelled(threadId: string, toolCallId: string): Promise<void> {
    return this.postAll("/cancel_tool_call", JSON.stringify({ thread_id: threadId, tool_call_id: toolCallId }));
  }
}
