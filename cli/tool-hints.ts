// The core's error messages point a model at its tools ("use memory_search or memory_list to find
// ids"); a person at the command line is pointed at the commands that do the same.

const HINTS: [RegExp, string][] = [
  [/use memory_search or memory_list to find ids/g, "find ids with `infinity-memory memory search` or `memory list`"],
  [/skill_search lists what exists/g, "`infinity-memory skills list` shows what exists"],
  [/skill_propose one first/g, "import one first with `infinity-memory skills import DIR`"],
  [/use skill_publish for a candidate/g, "approve a candidate with `infinity-memory skills approve`"],
  [/use memory_forget to remove it/g, "remove it with `infinity-memory memory forget`"],
  [/see memory_history for its newest version/g, "`infinity-memory memory show ID` lists its versions"],
  [/memory_update on (mem_\w+) changes that/g, "`infinity-memory memory correct $1` changes that"],
  [/a person's confirmation \(memory_review\)/g, "a person's confirmation (`infinity-memory memory review --confirm ID`)"],
];

/** `message` with tool hints replaced by the matching commands. */
export function forCommandLine(message: string): string {
  return HINTS.reduce((m, [re, to]) => m.replace(re, to), message);
}
