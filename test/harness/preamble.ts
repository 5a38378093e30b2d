// The system prompt exactly as the runtime assembles it (reference §4.1, core
// `event_processor::run_completion`), plus the daemon's per-session extra prompt (§2.3,
// `SessionRapManager::get_or_init`) and the proposed `prompt_prefix` seam (§4.4):
//
//   [prefix + "\n\n"] + default prompt + "\n\nYour current thread ID is `T`. The root thread ID is `R`."
//                     + ["\n\n" + extra_system_prompt]

/**
 * Stands in for Infinity's `default_prompt.md` (compiled into the daemon, not replaceable). Tests
 * that need the real text can pass it as `MockInfinityOptions.defaultPrompt`; everything
 * around it is assembled byte for byte as the daemon does.
 */
export const DEFAULT_PROMPT = [
  "You are Infinity, a coding agent that works in threads.",
  "",
  "## Threads",
  "Spawn a child thread with `spawn_thread` for a self-contained sub-task; pass the full thread stack as `child_of`.",
  "A child inherits your conversation so far. Inside a child, follow only the instructions you were given there,",
  "report back with `report_to_parent`, and finish with `close_thread`.",
  "",
  "## Tools",
  "Tool results arrive asynchronously. Call one tool at a time and wait for its result.",
].join("\n");

/**
 * Rust's `{:?}` for a path or string: double-quoted, with `\\`, `\"`, `\n`, `\r`, `\t`, `\0`
 * escaped and other control characters as `\u{hex}` (JSON.stringify differs on the latter).
 */
export function rustDebugString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp === 0) out += "\\0";
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += `\\u{${cp.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

/** The daemon's `extra_system_prompt` for a session whose working directory is `cwd`. */
export function daemonExtraSystemPrompt(cwd: string): string {
  return (
    `The user's current working directory is: ${rustDebugString(cwd)}\n\n` +
    "Use the `set_title` tool to give the current thread a short, descriptive title. " +
    "Set it once at the start when the user's intent becomes clear, and update it only " +
    "when the overall scope of work changes significantly. Do not call it repeatedly " +
    "for minor follow-ups within the same task."
  );
}

export interface PreambleParts {
  defaultPrompt: string;
  threadId: string;
  rootThreadId: string;
  extraSystemPrompt: string | null;
  /** from the promptPrefix seam; null or undefined leaves the daemon's preamble unchanged */
  prefix?: string | null;
}

export function buildPreamble(p: PreambleParts): string {
  const threadInfo = `\n\nYour current thread ID is \`${p.threadId}\`. The root thread ID is \`${p.rootThreadId}\`.`;
  const base = p.extraSystemPrompt === null ? `${p.defaultPrompt}${threadInfo}` : `${p.defaultPrompt}${threadInfo}\n\n${p.extraSystemPrompt}`;
  return p.prefix === null || p.prefix === undefined ? base : `${p.prefix}\n\n${base}`;
}

/** Recover the thread ids from a preamble, as a provider proxy would (reference §4.3). */
export function threadIdsOfPreamble(preamble: string): { threadId: string; rootThreadId: string } | null {
  const m = /Your current thread ID is `([^`]*)`\. The root thread ID is `([^`]*)`\./.exec(preamble);
  return m ? { threadId: m[1]!, rootThreadId: m[2]! } : null;
}
