#!/usr/bin/env node
// Regenerates the TypeScript bindings of proto/ into proto/gen (committed), or into
// `--out DIR`/gen when given (the stale check in test/context-hook/grpc-codegen.test.ts).
// Runs offline: buf and protoc-gen-es both come from node_modules/.bin.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const protoDir = join(repo, "proto");
const bin = join(repo, "node_modules", ".bin");

function parseArgs(argv) {
  const i = argv.indexOf("--out");
  if (i === -1) return { out: null };
  const out = argv[i + 1];
  if (!out) throw new Error("--out needs a directory");
  return { out: resolve(out) };
}

const { out } = parseArgs(process.argv.slice(2));
const buf = join(bin, process.platform === "win32" ? "buf.cmd" : "buf");
if (!existsSync(buf)) {
  console.error(`codegen: ${buf} not found; run npm install (dev dependency @bufbuild/buf)`);
  process.exit(1);
}

// buf resolves the template's `out` against its working directory, hence cwd = proto/.
const args = ["generate", "--template", "buf.gen.yaml", ...(out ? ["--output", out] : [])];
const r = spawnSync(buf, args, {
  cwd: protoDir,
  stdio: "inherit",
  // `local: protoc-gen-es` is looked up on PATH; put ours first so a global one cannot win.
  env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` },
});
if (r.error) {
  console.error(`codegen: could not run buf: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
