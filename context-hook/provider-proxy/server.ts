// The proxy's own provider socket: `$TMPDIR/inf-proxy-{12 hex}.sock` (the daemon's providers use
// `inf-provider-…`), one exchange per connection, any number of connections at once.
import { randomBytes } from "node:crypto";
import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runExchange, type ExchangeDeps } from "./exchange.js";

/** sun_path is 108 bytes on Linux (104 on macOS), NUL included */
const MAX_SOCKET_PATH_BYTES = 103;
/** the daemon's own client frames are capped at 256 MiB; a request line may be as large */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

export function proxySocketPath(dir: string = tmpdir()): string {
  return join(dir, `inf-proxy-${randomBytes(6).toString("hex")}.sock`);
}

export type ProxyServerDeps = Omit<ExchangeDeps, "track" | "maxLineBytes"> & { maxLineBytes?: number };

export class ProviderProxyServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pending = new Set<Promise<void>>();
  private nextId = 1;
  private path: string | null = null;

  constructor(deps: ProxyServerDeps) {
    const exchangeDeps: ExchangeDeps = {
      ...deps,
      maxLineBytes: deps.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      track: (p) => {
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
      },
    };
    // allowHalfOpen: a client may shut down its write side after the request and still read.
    this.server = createServer({ allowHalfOpen: true }, (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
      runExchange(socket, this.nextId++, exchangeDeps);
    });
  }

  get socketPath(): string | null {
    return this.path;
  }

  async listen(path: string = proxySocketPath()): Promise<string> {
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw new Error(`socket path too long for a Unix socket (${Buffer.byteLength(path)} bytes): ${path}; set TMPDIR to a shorter directory`);
    }
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(path, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.path = path;
    // Whoever can connect can put text in front of a system prompt: owner only.
    chmodSync(path, 0o600);
    return path;
  }

  /** stop accepting, cut open exchanges, wait for trace writes, remove the socket file */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    await Promise.allSettled([...this.pending]);
    if (this.path) rmSync(this.path, { force: true });
  }
}
