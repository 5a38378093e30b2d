// `infinity-memory manifests write|check`: keep rap-manifests/*.json equal to the zod schemas.
import type { Command } from "commander";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generatedManifests } from "../manifests.js";

export function registerManifests(program: Command): void {
  const cmd = program.command("manifests").description("generate or check rap-manifests/*.json from the tool schemas");
  cmd
    .command("write")
    .option("--dir <dir>", "output folder", "rap-manifests")
    .action((o: { dir: string }) => {
      for (const [name, text] of Object.entries(generatedManifests())) {
        writeFileSync(join(o.dir, `${name}.json`), text);
        process.stdout.write(`wrote ${join(o.dir, `${name}.json`)}\n`);
      }
    });
  cmd
    .command("check")
    .option("--dir <dir>", "folder", "rap-manifests")
    .action((o: { dir: string }) => {
      const stale = Object.entries(generatedManifests()).filter(([name, text]) => {
        const f = join(o.dir, `${name}.json`);
        return !existsSync(f) || readFileSync(f, "utf8") !== text;
      });
      if (stale.length > 0) {
        process.stderr.write(`stale: ${stale.map(([n]) => n).join(", ")}; run \`npm run manifests\`\n`);
        process.exitCode = 1;
      } else process.stdout.write("manifests are up to date\n");
    });
}
