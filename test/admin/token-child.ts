// One of several processes creating the admin token at once, for the token race test: for each
// round it waits for the round's instant (all processes are given the same start on stdin), then
// loads or creates the token of that round's fresh home. Prints one JSON array: per round the
// token and whether this process created it, or the error. argv: <dir> <rounds> <stepMs>
import { join } from "node:path";
import { createInterface } from "node:readline";
import { loadOrCreateToken } from "../../admin/api/token.js";

const [dir, rounds, stepMs] = process.argv.slice(2);
process.stdout.write("ready\n");
const rl = createInterface({ input: process.stdin });
rl.once("line", (line) => {
  rl.close();
  const start = Number(line);
  const out: { token?: string; created?: boolean; error?: string }[] = [];
  for (let r = 0; r < Number(rounds); r++) {
    const at = start + r * Number(stepMs);
    while (performance.timeOrigin + performance.now() < at) {
      // spin: a timer is too coarse to line the processes up
    }
    try {
      const { token, created } = loadOrCreateToken(join(dir!, String(r)));
      out.push({ token, created });
    } catch (e) {
      out.push({ error: (e as Error).message });
    }
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
