// The evolution tests' set-up over a chore world: skills a person wrote and published, and the
// skills RAP server over the world's services (its evolution service included) to call tools on.
import pino from "pino";
import type { ChoreWorld } from "../../bench/evolution/chore.js";
import { parseSkillMd, renderSkillMd } from "../../core/skills/skill-md.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { skillsToolset } from "../../toolsets/skills/tools.js";
import { startCallbackSink } from "../helpers/callback-sink.js";
import type { RapCaller } from "../skills/helpers.js";

/** the steps of the deploy skills the curator finds to be near-duplicates */
export const DEPLOY_STEPS = "1. Build the image.\n2. Push it.\n3. Roll out the web service on staging.\n";

/** publish(name, body, description?) in `w`: proposes the skill as alice wrote it and publishes it; the version */
export function publisher(w: ChoreWorld) {
  return async (name: string, body: string, description = "Deploy the web service to staging") => {
    const p = await w.skills.propose(parseSkillMd(renderSkillMd({ frontmatter: { name, description }, body })), { actor: "cli:alice", author: "human", ref: null });
    await w.skills.publish(await w.skills.preparePublish(name, p.version.id), "cli:alice");
    return p.version;
  };
}

/** deploy-a and deploy-b published with DEPLOY_STEPS (a merge for the curator to ask about); the publisher, for more */
export async function publishDeployTwins(w: ChoreWorld) {
  const publish = publisher(w);
  await publish("deploy-a", DEPLOY_STEPS);
  await publish("deploy-b", DEPLOY_STEPS);
  return publish;
}

/** the skills toolset over `w` on loopback, with a callback sink; close() stops both (not the world) */
export async function serveSkills(w: ChoreWorld): Promise<RapCaller & { close(): Promise<void> }> {
  const sink = await startCallbackSink();
  const toolset = skillsToolset({ service: w.skills, toggles: w.ctx.toggles, localUser: "alice", projectOf: () => "/work/app", evolution: w.evolution });
  const server = await startRapServer({ toolset, db: w.ctx.db, host: "127.0.0.1", port: 0, logger: pino({ level: "silent" }) });
  return {
    sink,
    endpoint: `http://127.0.0.1:${server.port}/invoke`,
    close: async () => {
      await server.close({ graceMs: 1000 });
      await sink.close();
    },
  };
}
