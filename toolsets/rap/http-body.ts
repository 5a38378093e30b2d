// Request bodies and plain-text replies for the RAP server. Bodies are size-capped, must be
// strict UTF-8 (as serde's from_slice demands) and parse against a wire schema; every failure
// is an HttpError carrying the status and a message that names the problem.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { describeIssues } from "./arg-errors.js";
import { safeParseWire } from "./safe-parse.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

// fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM keeps a BOM so JSON.parse rejects it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The whole body as text. An oversized body is rejected with 413 but still drained (not
 * destroyed), so the client reads the 413 instead of a connection reset.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > limit) {
      req.resume();
      reject(new HttpError(413, `request body of ${declared} bytes exceeds the limit of ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        reject(new HttpError(413, `request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", (e) => reject(new HttpError(400, `reading the request body failed: ${e.message}`)));
    req.on("end", () => {
      if (over) return;
      try {
        resolve(utf8.decode(Buffer.concat(chunks)));
      } catch {
        reject(new HttpError(400, "request body is not valid UTF-8"));
      }
    });
  });
}

export function parseJson<S extends z.ZodType>(raw: string, schema: S, what: string): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw new HttpError(400, `invalid JSON in ${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const r = safeParseWire(schema, value);
  if (!r.success) throw new HttpError(400, `invalid ${what}: ${describeIssues(schema, value, r.error.issues, "the body")}`);
  return r.data;
}

export function reply(res: ServerResponse, status: number, body = "", contentType = "text/plain; charset=utf-8"): void {
  if (res.headersSent) return;
  const headers: Record<string, string | number> = { "content-length": Buffer.byteLength(body) };
  if (body !== "") headers["content-type"] = contentType;
  res.writeHead(status, headers);
  res.end(body);
}
