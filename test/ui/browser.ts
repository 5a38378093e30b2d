// Real-browser plumbing for the review page tests: Debian's Chromium driven by playwright-core
// (which never downloads a browser), and `infinity-memory serve --ui` as a child process.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { CLI } from "../helpers/cli.js";

export const CHROMIUM = process.env.INFINITY_MEMORY_CHROMIUM ?? "/usr/bin/chromium";
export const REQUIRE_BROWSER = process.env.INFINITY_MEMORY_REQUIRE_BROWSER === "1";
export const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
export const FAILURES_DIR = join(ROOT, "test-results", "ui");
/**
 * Pictures of each view: docs/screenshots/ (committed, shown in the README) when
 * INFINITY_MEMORY_UPDATE_SCREENSHOTS=1, else test-results/ui/views/ so a plain test run leaves
 * the working tree clean.
 */
export const SCREENSHOTS_DIR =
  process.env.INFINITY_MEMORY_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : join(ROOT, "test-results", "ui", "views");

/** null when the browser can run here, else why not */
export function browserMissing(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} not found (apt-get install chromium, or set INFINITY_MEMORY_CHROMIUM)`;
  if (!existsSync(join(ROOT, "dist", "admin-ui", "index.html"))) return "dist/admin-ui is not built (npm run build)";
  return null;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** console errors, page errors and CSP violations seen so far */
  problems: string[];
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile, no network chatter, a laptop-sized window. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "imem-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1366, height: 768 },
    locale: "en-GB",
    timezoneId: "UTC",
    reducedMotion: "reduce",
  });
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return {
    context,
    page,
    problems,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface UiServer {
  child: ChildProcessWithoutNullStreams;
  /** http://127.0.0.1:PORT/ */
  base: string;
  token: string;
  stdout: string[];
  stderr: string[];
  stop(): Promise<void>;
}

/** `infinity-memory serve --ui` on a temp home, read its printed page address. */
export async function startUiServer(home: string, db: string): Promise<UiServer> {
  const child = spawn(process.execPath, [CLI, "serve", "--ui", "--ui-port", "0", "--db", db, "--port", "0", "--log", join(home, "serve.log")], {
    env: {
      ...process.env,
      INFINITY_MEMORY_HOME: home,
      INFINITY_MEMORY_USER: "alice",
      // never read the machine's own daemon state
      INFINITY_HOME: join(home, "no-infinity-home"),
      RAP_EMBEDDED: "",
    },
    stdio: ["pipe", "pipe", "pipe"],
  }) as ChildProcessWithoutNullStreams;
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | null>((res) => child.on("exit", (c) => res(c)));
  const url = await new Promise<URL>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`serve --ui printed no page address within 20 s; stdout: ${stdout.join("")} stderr: ${stderr.join("")}`)), 20_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout.push(d.toString());
      const m = /(http:\/\/127\.0\.0\.1:\d+\/[^\s]*#token=[0-9a-f]+)/.exec(stdout.join(""));
      if (m) {
        clearTimeout(t);
        res(new URL(m[1]!));
      }
    });
    void exited.then((c) => {
      clearTimeout(t);
      rej(new Error(`serve --ui exited with ${c}: ${stderr.join("")}`));
    });
  });
  const token = new URLSearchParams(url.hash.slice(1)).get("token")!;
  url.hash = "";
  return {
    child,
    base: url.toString(),
    token,
    stdout,
    stderr,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGINT");
        const t = setTimeout(() => child.kill("SIGKILL"), 8000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

/** Call the admin API the way the page does (to check what the server holds). */
export async function api<T = unknown>(s: UiServer, path: string, body: object = {}): Promise<{ status: number; json: T }> {
  const res = await fetch(new URL(`api/v1/${path}`, s.base), {
    method: "POST",
    headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as T };
}

/** The window as a person sees it, or (with `part`) one element in full. */
export async function screenshot(page: Page, dir: string, name: string, part?: Locator): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name.replace(/[^a-z0-9-]+/gi, "-").toLowerCase()}.png`);
  await page.mouse.move(1, 760); // no hover highlight in the picture
  if (part) await part.screenshot({ path: file });
  else await page.screenshot({ path: file, fullPage: false });
  return file;
}
