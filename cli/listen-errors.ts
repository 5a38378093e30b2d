// A server that cannot listen says which option chose the address and what to do: Node's
// "listen EADDRINUSE: address already in use 127.0.0.1:7411" (and grpc-js's "No address added out
// of total 1 resolved errors: [...]") name neither.
import { existsSync } from "node:fs";
import { dirname } from "node:path";

/** The system error code a listen failure carries, or that grpc-js folded into its message. */
function codeOf(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  const m = /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN|ENOENT)\b/.exec(e instanceof Error ? e.message : String(e));
  return m?.[1] ?? null;
}

/**
 * Rewrites a listen failure of the server that `option` configures (e.g. `--ui-port`) at `address`
 * (HOST:PORT or unix:/path), naming `hostOption` when the host is the problem; any other error is
 * returned as it was.
 */
export function listenProblem(option: string, address: string, e: unknown, hostOption = option): unknown {
  if (address.startsWith("unix:")) {
    const path = address.slice("unix:".length);
    if (!existsSync(dirname(path))) return new Error(`${option} ${address}: the folder ${dirname(path)} does not exist; create it or choose another socket path`);
  }
  switch (codeOf(e)) {
    case "EADDRINUSE":
      return new Error(`${option}: ${address} is already in use (another infinity-memory serve?); stop that server, or choose another port (0 picks a free one)`);
    case "EACCES":
      return new Error(`${option}: this user may not listen on ${address}${address.startsWith("unix:") ? "" : " (ports below 1024 need privileges)"}; choose another`);
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new Error(`${hostOption}: cannot listen on ${address}: no such address on this machine (127.0.0.1 is the loopback)`);
    default:
      return e;
  }
}
