// The HTTP face of the admin API for the review page: `POST /api/v1/<Service>/<Method>` with
// JSON (CONTRACT.md), `GET /api/v1/events` (Server-Sent Events), and the page's static files
// from dist/admin-ui with a strict Content-Security-Policy. Every /api request needs the token.
import { createReadStream, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, resolve, sep } from "node:path";
import type { Logger } from "pino";
import { isLoopbackHost } from "../../core/loopback.js";
import { API_PREFIX, EVENTS_PATH } from "./contract.js";
import { callJson, type Route } from "./dispatch.js";
import { ApiError, httpStatusOf, toApiError } from "./errors.js";
import type { ChangeWatcher } from "./events.js";
import { bearerMatches, tokenMatches } from "./token.js";

export const MAX_BODY_BYTES = 1 << 20;
const PING_MS = 15_000;

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

export interface AdminHttpOptions {
  routes: Map<string, Route>;
  token: string;
  watcher: ChangeWatcher;
  /** built page (dist/admin-ui); a missing directory answers 404 for the page */
  uiDir: string;
  host: string;
  port: number;
  logger: Logger;
}

export interface AdminHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}


function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    ...extra,
  });
  res.end(text);
}

function sendError(res: ServerResponse, e: ApiError, extra: Record<string, string> = {}): void {
  sendJson(res, httpStatusOf(e), { error: e.message, code: e.code, ...(e.field !== undefined ? { field: e.field } : {}) }, extra);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const declared = Number(req.headers["content-length"] ?? NaN);
    if (declared > MAX_BODY_BYTES) {
      fail(new ApiError("too_large", `the request body is ${declared} bytes; at most ${MAX_BODY_BYTES}`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (over) return;
      if (size > MAX_BODY_BYTES) {
        // read on without keeping it, so the 413 reaches the client (it closes the connection):
        // destroying the request reset the connection, and a chunked upload got no answer at all
        over = true;
        chunks.length = 0;
        fail(new ApiError("too_large", `the request body exceeds ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
    req.on("error", fail);
  });
}

export async function startAdminHttp(o: AdminHttpOptions): Promise<AdminHttpServer> {
  const uiRoot = resolve(o.uiDir);
  const streams = new Set<ServerResponse>();
  // DNS rebinding guard: a page on another origin that resolves to 127.0.0.1 sends its own Host.
  // The name is what tells; the port is not ours to check: a tunnel or port mapping to this server
  // (ssh -L 9000:127.0.0.1:7413) has the browser send "localhost:9000".
  const hostAllowed = (h: string | undefined): boolean => {
    if (!isLoopbackHost(o.host)) return true;
    if (!h) return false;
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
    return !!m && isLoopbackHost(m[1]!.toLowerCase());
  };

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const viaQuery = url.pathname === EVENTS_PATH ? url.searchParams.get("access_token") : null;
    if (!bearerMatches(req.headers.authorization, o.token) && !tokenMatches(viaQuery, o.token)) {
      sendError(res, new ApiError("unauthenticated", "missing or wrong access token: send `Authorization: Bearer <token>` (the token is in $INFINITY_MEMORY_HOME/admin.token)"), {
        "WWW-Authenticate": 'Bearer realm="infinity-memory admin"',
      });
      return;
    }
    if (url.pathname === EVENTS_PATH) {
      if (req.method !== "GET") return sendError(res, new ApiError("method_not_allowed", `${EVENTS_PATH} takes GET`), { Allow: "GET" });
      return events(req, res);
    }
    const route = o.routes.get(url.pathname.slice(API_PREFIX.length + 1));
    if (!url.pathname.startsWith(`${API_PREFIX}/`) || !route) {
      return sendError(res, new ApiError("not_found", `no API call at ${url.pathname}; calls are POST ${API_PREFIX}/<Service>/<Method> (admin/api/CONTRACT.md)`));
    }
    if (req.method !== "POST") return sendError(res, new ApiError("method_not_allowed", `${url.pathname} takes POST with a JSON body`), { Allow: "POST" });
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") {
      req.resume();
      return sendError(res, new ApiError("unsupported_media_type", `send the request as Content-Type: application/json (got "${type || "none"}")`));
    }
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text.trim().length === 0 ? {} : JSON.parse(text);
    } catch (e) {
      throw new ApiError("invalid_argument", `the body is not valid JSON (${(e as Error).message}); send a JSON object like {}`);
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw new ApiError("invalid_argument", "the body must be a JSON object, e.g. {}");
    sendJson(res, 200, await callJson(route, body));
  }

  async function events(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    streams.add(res);
    const unsubscribe = o.watcher.subscribe((e) => {
      res.write(`event: change\nid: ${e.id}\ndata: ${JSON.stringify({ topics: e.topics, auditSeq: e.auditSeq, at: e.at })}\n\n`);
    });
    const ping = setInterval(() => res.write(": ping\n\n"), PING_MS);
    ping.unref();
    const done = () => {
      clearInterval(ping);
      unsubscribe();
      streams.delete(res);
    };
    req.on("close", done);
    res.on("close", done);
    const hello = await o.watcher.snapshot();
    res.write(`retry: 2000\n\nevent: hello\ndata: ${JSON.stringify(hello)}\n\n`);
  }

  function page(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== "GET" && req.method !== "HEAD") return sendError(res, new ApiError("method_not_allowed", "the page takes GET"), { Allow: "GET, HEAD" });
    let rel: string;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      return sendError(res, new ApiError("invalid_argument", "malformed path"));
    }
    if (rel === "/") rel = "/index.html";
    const file = resolve(join(uiRoot, rel));
    const inside = file.startsWith(uiRoot + sep) && !rel.includes("\0");
    let size = -1;
    try {
      if (inside) {
        const st = statSync(file);
        if (st.isFile()) size = st.size;
      }
    } catch {
      // not there
    }
    if (size < 0) {
      const hint = rel === "/index.html" ? " (the page is not built: npm run build:ui)" : "";
      return sendError(res, new ApiError("not_found", `no such file ${url.pathname}${hint}`));
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": MIME[extname(file).toLowerCase()] ?? "application/octet-stream",
      "Content-Length": size,
      // hashed asset names may be cached; the entry page must be fetched fresh
      "Cache-Control": rel.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
    });
    if (req.method === "HEAD") return void res.end();
    createReadStream(file).pipe(res);
  }

  const server: Server = createServer((req, res) => {
    const started = performance.now();
    res.on("finish", () => o.logger.debug({ method: req.method, path: (req.url ?? "").split("?")[0], status: res.statusCode, ms: Math.round(performance.now() - started) }, "admin http"));
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      return sendError(res, new ApiError("invalid_argument", "malformed request URL"));
    }
    if (!hostAllowed(req.headers.host)) {
      return sendError(res, new ApiError("forbidden", "this server answers loopback host names only (127.0.0.1, localhost)"));
    }
    const isApi = url.pathname === API_PREFIX.slice(0, 4) || url.pathname.startsWith("/api/");
    const work = isApi ? api(req, res, url) : Promise.resolve(page(req, res, url));
    work.catch((e: unknown) => {
      const err = toApiError(e);
      if (err.code === "internal") o.logger.error({ err: e, path: url.pathname }, "admin call failed");
      if (res.headersSent) return void res.destroy();
      // a body past the limit is still arriving: end the connection after the answer
      sendError(res, err, err.code === "too_large" ? { Connection: "close" } : {});
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(o.port, o.host, () => {
      server.off("error", fail);
      done();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${hostPart}:${port}/`,
    port,
    close: () =>
      new Promise<void>((done) => {
        for (const s of streams) s.end();
        streams.clear();
        server.close(() => done());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}
