// A tiny in-test RAP tool server (node:http), in the style of Infinity's `rap-test-servers`:
// serves a manifest, acks invocations (status configurable), records every request, and lets
// the test answer calls through the invocation's callback_url when it chooses.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { RapInvocation, type ToolDef } from "../../toolsets/rap/wire.js";

export interface RecordedRequest {
  method: string;
  path: string;
  raw: string;
}

export interface TestRapServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** invocation bodies exactly as received */
  invocations: { raw: string; inv: RapInvocation }[];
  cancels: { thread_id: string; tool_call_id: string }[];
  closes: { thread_id: string }[];
  choiceAnswers: { id: string; selected: number }[];
  /** resolves with the next invocation (or one already received that matches) */
  nextInvocation(pred?: (inv: RapInvocation) => boolean, timeoutMs?: number): Promise<{ raw: string; inv: RapInvocation }>;
  waitFor<T>(get: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export interface TestRapServerOptions {
  name?: string;
  tools: ToolDef[];
  /** port to listen on (default: any free port) */
  port?: number;
  /** status of the invocation ack (default 200) */
  ackStatus?: number;
  /** status of the manifest GET (default 200) */
  manifestStatus?: number;
  /** awaited before the ack is sent */
  beforeAck?: (inv: RapInvocation, raw: string) => void | Promise<void>;
  /** awaited before any non-invocation POST (/cancel_tool_call, /close_thread, …) is answered */
  beforeReply?: (path: string, raw: string) => void | Promise<void>;
  /** called after the ack is sent */
  onInvoke?: (inv: RapInvocation, raw: string) => void | Promise<void>;
}

export const echoTool: ToolDef = {
  name: "echo",
  description: "Echo the text back.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  displayScript: '"Echo " + args.text',
};

export async function startTestRapServer(o: TestRapServerOptions): Promise<TestRapServer> {
  const requests: RecordedRequest[] = [];
  const invocations: { raw: string; inv: RapInvocation }[] = [];
  const cancels: { thread_id: string; tool_call_id: string }[] = [];
  const closes: { thread_id: string }[] = [];
  const choiceAnswers: { id: string; selected: number }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const path = new URL(req.url ?? "/", "http://x").pathname;
      requests.push({ method: req.method ?? "", path, raw });
      if (req.method === "GET" && path === "/.well-known/rap-toolset") {
        const host = req.headers.host ?? "127.0.0.1";
        res.writeHead(o.manifestStatus ?? 200, { "content-type": "application/json" });
        res.end(JSON.stringify({ name: o.name ?? "test", endpoint: `http://${host}/invoke`, tools: o.tools }));
        return;
      }
      if (req.method === "POST" && path === "/invoke") {
        const inv = RapInvocation.parse(JSON.parse(raw));
        invocations.push({ raw, inv });
        await o.beforeAck?.(inv, raw);
        res.writeHead(o.ackStatus ?? 200).end();
        void Promise.resolve(o.onInvoke?.(inv, raw));
        return;
      }
      if (req.method === "POST") await o.beforeReply?.(path, raw);
      if (req.method === "POST" && path === "/cancel_tool_call") cancels.push(JSON.parse(raw) as { thread_id: string; tool_call_id: string });
      else if (req.method === "POST" && path === "/close_thread") closes.push(JSON.parse(raw) as { thread_id: string });
      else if (req.method === "POST" && path === "/user_choice_response") choiceAnswers.push(JSON.parse(raw) as { id: string; selected: number });
      else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(o.port ?? 0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const waitFor = async <T>(get: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = get();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error("timed out waiting on the test RAP server");
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    invocations,
    cancels,
    closes,
    choiceAnswers,
    waitFor,
    nextInvocation: (pred = () => true, timeoutMs) => waitFor(() => invocations.find((i) => pred(i.inv)), timeoutMs),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** POST a callback body (object or raw text) to a callback URL; resolves with status and reply text. */
export async function postCallback(url: string, body: unknown, path = ""): Promise<{ status: number; text: string }> {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}
