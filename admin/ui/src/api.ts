// The page's only way to the server (admin/api/CONTRACT.md): POST /api/v1/<Service>/<Method> with
// the bearer token, and the SSE change stream read through fetch() so the token travels in a
// header, never in a URL. The token arrives in the URL fragment, is kept for the tab's lifetime
// (sessionStorage) and removed from the address bar.
import type { ChangeEvent, MethodName, RequestOf, ResponseOf, ServiceName, Topic } from "../../api/contract.js";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly field: string | null,
  ) {
    super(message);
  }
}

const TOKEN_KEY = "infinity-memory.token";

/** Take `#token=…` out of the address bar; fall back to the tab's session storage after a reload. */
export function takeToken(): string | null {
  const raw = location.hash.replace(/^#\/?/, "");
  const params = new URLSearchParams(raw.includes("token=") ? raw : "");
  const fromHash = params.get("token");
  if (fromHash) {
    sessionStorage.setItem(TOKEN_KEY, fromHash);
    history.replaceState(null, "", location.pathname + location.search + "#/memories");
    return fromHash;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export type LiveState = "connecting" | "live" | "reconnecting" | "unauthorized";

export class Api {
  private readonly base = new URL("./", location.href);

  constructor(private readonly token: string) {}

  async call<S extends ServiceName, M extends MethodName<S>>(service: S, method: M, body: RequestOf<S, M>): Promise<ResponseOf<S, M>> {
    let res: Response;
    try {
      res = await fetch(new URL(`api/v1/${service}/${method}`, this.base), {
        method: "POST",
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError(`the server did not answer (${(e as Error).message}); is \`infinity-memory serve --ui\` still running?`, 0, "unreachable", null);
    }
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // a non-JSON answer is reported with its status below
    }
    if (!res.ok) {
      const err = (json ?? {}) as { error?: unknown; code?: unknown; field?: unknown };
      const msg = typeof err.error === "string" ? err.error : text.slice(0, 300) || res.statusText;
      const field = typeof err.field === "string" ? err.field : null;
      throw new ApiError(`${msg}${field ? ` (field ${field})` : ""} [${res.status}]`, res.status, typeof err.code === "string" ? err.code : null, field);
    }
    return json as ResponseOf<S, M>;
  }

  /**
   * Follow GET /api/v1/events: `onChange` gets the topics of each change; reconnects after a
   * drop (the server's `retry:` hint, else 2 s). Returns a function that stops it.
   */
  events(onChange: (topics: Topic[]) => void, onState: (s: LiveState) => void): () => void {
    const abort = new AbortController();
    let retryMs = 2000;
    let connected = false;
    const run = async () => {
      while (!abort.signal.aborted) {
        try {
          const res = await fetch(new URL("api/v1/events", this.base), {
            headers: { authorization: `Bearer ${this.token}`, accept: "text/event-stream" },
            signal: abort.signal,
            cache: "no-store",
          });
          if (res.status === 401) {
            onState("unauthorized");
            return;
          }
          if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
          onState("live");
          // after a reconnect something may have changed in between
          if (connected) onChange(["memories", "pending", "skills", "candidates", "learning", "audit"]);
          connected = true;
          await readStream(res.body, (ev) => {
            if (ev.retry) retryMs = ev.retry;
            if (ev.event === "change" && ev.data) {
              try {
                onChange((JSON.parse(ev.data) as ChangeEvent).topics);
              } catch {
                // a malformed event is not a reason to drop the connection
              }
            }
          });
        } catch {
          if (abort.signal.aborted) return;
        }
        onState("reconnecting");
        await new Promise((r) => setTimeout(r, retryMs));
      }
    };
    void run();
    return () => abort.abort();
  }
}

interface SseEvent {
  event: string;
  data: string;
  retry: number | null;
}

/** Parse a text/event-stream body (the WHATWG framing: fields per line, blank line ends an event). */
async function readStream(body: ReadableStream<Uint8Array>, emit: (e: SseEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let cur: SseEvent = { event: "message", data: "", retry: null };
  let hasData = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
      if (line === "") {
        if (hasData || cur.retry !== null) emit(cur);
        cur = { event: "message", data: "", retry: null };
        hasData = false;
        continue;
      }
      if (line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const val = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") cur.event = val;
      else if (field === "data") {
        cur.data = hasData ? `${cur.data}\n${val}` : val;
        hasData = true;
      } else if (field === "retry" && /^\d+$/.test(val)) cur.retry = Number(val);
    }
  }
}
