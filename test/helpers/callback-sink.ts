// A real callback listener, as the daemon runs one: records every POSTed callback body.
import http from "node:http";

export interface CallbackSink {
  url: string;
  bodies: Record<string, unknown>[];
  /** resolves with the first callback matching `pred` (waits for it to arrive) */
  next(pred: (b: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startCallbackSink(): Promise<CallbackSink> {
  const bodies: Record<string, unknown>[] = [];
  const waiters: { pred: (b: Record<string, unknown>) => boolean; resolve: (b: Record<string, unknown>) => void }[] = [];
  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end("POST only");
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch (e) {
        res.writeHead(400).end(`Bad request: ${(e as Error).message}`);
        return;
      }
      bodies.push(body);
      res.writeHead(200).end("OK");
      for (const w of [...waiters]) {
        if (w.pred(body)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(body);
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    next(pred, timeoutMs = 10_000) {
      const found = bodies.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("timed out waiting for a callback")), timeoutMs);
        waiters.push({
          pred,
          resolve: (b) => {
            clearTimeout(t);
            resolve(b);
          },
        });
      });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** POST a raw invocation body the way the daemon does. */
export async function postJson(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}
