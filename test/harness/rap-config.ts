// rap.json loading and merging as infinity-daemon does it (reference §2.1; daemon
// `config.rs::load_merged_rap_config`, core `ToolsConfig::merge`): the project file
// `{cwd}/.infinity/rap.json` first, then the user file's entries whose `id` is not already among
// the project entries (entries without an id are always appended).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const id = z.string().nullish();

/** `ToolSetConfig`: `#[serde(tag = "type", rename_all = "snake_case")]`. */
export const ToolSetConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("toolset_server"), server_url: z.string(), id }),
  z.object({
    type: z.literal("toolset_command"),
    command: z.string(),
    id,
    crate_name: z.string().nullish(),
    git: z.string().nullish(),
    path: z.string().nullish(),
  }),
  z.object({
    type: z.literal("mcp_server"),
    name: z.string(),
    command: z.array(z.string()),
    env: z.record(z.string(), z.string()).default({}),
    id,
  }),
  z.object({
    type: z.literal("http_mcp_server"),
    name: z.string(),
    url: z.string(),
    headers: z.record(z.string(), z.string()).default({}),
    id,
  }),
]);
export type ToolSetConfig = z.output<typeof ToolSetConfig>;

export const ToolsConfig = z.object({ tool_sets: z.array(ToolSetConfig) });
export type ToolsConfig = z.output<typeof ToolsConfig>;

export class RapConfigError extends Error {
  override name = "RapConfigError";
}

/** `ToolsConfig::from_file`: a missing or malformed file is an error for the whole load. */
export function loadRapConfigFile(path: string): ToolsConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new RapConfigError(`${path}: ${(e as Error).message}`);
  }
  const parsed = ToolsConfig.safeParse(raw);
  if (!parsed.success) throw new RapConfigError(`${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/**
 * `ToolsConfig::merge`: the id set is taken from `local` before appending, so two user
 * entries sharing an id that the project does not use are both kept, as in the daemon.
 */
export function mergeRapConfigs(local: ToolsConfig, user: ToolsConfig): ToolsConfig {
  const existing = new Set(local.tool_sets.flatMap((t) => (t.id ? [t.id] : [])));
  const merged = [...local.tool_sets];
  for (const t of user.tool_sets) {
    if (t.id && existing.has(t.id)) continue;
    merged.push(t);
  }
  return { tool_sets: merged };
}

export interface MergedRapConfig {
  /** the Info line the daemon shows the session's subscribers */
  info: string;
  /** null when neither file exists */
  config: ToolsConfig | null;
}

/**
 * Read and merge. `userConfigPath` is `{infinity home}/rap.json` (the daemon's
 * `~/.infinity/rap.json`), or null for none. Throws RapConfigError when a present file is bad.
 */
export function loadMergedRapConfig(cwd: string, userConfigPath: string | null): MergedRapConfig {
  const localPath = join(cwd, ".infinity", "rap.json");
  const local = existsSync(localPath) ? loadRapConfigFile(localPath) : null;
  const user = userConfigPath !== null && existsSync(userConfigPath) ? loadRapConfigFile(userConfigPath) : null;
  if (!local && !user) return { info: "Neither local nor user RAP configs exist, using empty config", config: null };
  if (!local) return { info: "Using user config", config: user };
  if (!user) return { info: "Using local config", config: local };
  return { info: "Both local and user RAP configs exist, merging", config: mergeRapConfigs(local, user) };
}
