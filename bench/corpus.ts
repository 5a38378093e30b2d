// Deterministic synthetic memories and queries for latency benchmarks: sentences built from
// templates over a vocabulary with a skewed (Zipf-like) word distribution, like real notes.

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PEOPLE = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yuki", "Zhang Wei", "Priya", "Mateo", "Fatima"];
const TOOLS = ["cargo", "npm", "pnpm", "yarn", "docker", "kubectl", "terraform", "helm", "pytest", "vitest", "jest", "eslint", "prettier", "ruff", "black", "make", "bazel", "gradle", "maven", "postgres", "redis", "sqlite", "nginx", "grafana", "prometheus", "kafka", "rabbitmq", "git", "github actions", "buildkite"];
const TOPICS = ["deployment", "testing", "logging", "authentication", "billing", "search", "caching", "migrations", "onboarding", "monitoring", "alerting", "backups", "releases", "code review", "documentation", "performance", "security", "accessibility", "localization", "analytics", "payments", "notifications", "scheduling", "reporting"];
const PLACES = ["Berlin", "Lisbon", "Tokyo", "Toronto", "Nairobi", "Austin", "Melbourne", "Seoul", "Madrid", "Oslo", "Dublin", "Bangalore"];
const THINGS = ["coffee", "green tea", "dark mode", "tabs", "spaces", "vim", "emacs", "vscode", "short answers", "detailed explanations", "type hints", "small commits", "feature flags", "trunk based development", "monorepos", "pair programming", "standups", "async updates"];
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const FILLER = ["usually", "always", "mostly", "since last year", "for the new service", "in the staging cluster", "on the main branch", "after the outage", "during the sprint", "for the mobile app", "in the data pipeline", "for the api gateway"];

function zipfPick<T>(xs: T[], r: () => number): T {
  // Skewed toward the front of the list, as real vocabularies are.
  const i = Math.floor(xs.length * Math.pow(r(), 1.8));
  return xs[Math.min(xs.length - 1, i)]!;
}

const TEMPLATES: ((r: () => number) => string)[] = [
  (r) => `${zipfPick(PEOPLE, r)} prefers ${zipfPick(THINGS, r)} ${zipfPick(FILLER, r)}.`,
  (r) => `The ${zipfPick(TOPICS, r)} service uses ${zipfPick(TOOLS, r)} ${zipfPick(FILLER, r)}.`,
  (r) => `Run ${zipfPick(TOOLS, r)} before ${zipfPick(TOPICS, r)} changes; it failed ${Math.floor(r() * 9) + 2} times without it.`,
  (r) => `${zipfPick(PEOPLE, r)} moved to ${zipfPick(PLACES, r)} and owns ${zipfPick(TOPICS, r)} now.`,
  (r) => `Lesson: ${zipfPick(TOPICS, r)} broke because ${zipfPick(TOOLS, r)} was pinned to version ${Math.floor(r() * 20)}.${Math.floor(r() * 10)}.`,
  (r) => `${zipfPick(PEOPLE, r)} is on call every ${zipfPick(DAYS, r)} for ${zipfPick(TOPICS, r)}.`,
  (r) => `The ${zipfPick(TOPICS, r)} dashboard lives in ${zipfPick(TOOLS, r)} under team ${zipfPick(PEOPLE, r)}.`,
  (r) => `User likes ${zipfPick(THINGS, r)} and dislikes ${zipfPick(THINGS, r)} ${zipfPick(FILLER, r)}.`,
];

export function memoryText(i: number, r: () => number): string {
  const t = TEMPLATES[Math.floor(r() * TEMPLATES.length)]!;
  // A serial keeps every text distinct, as distinct notes are.
  return `${t(r)} (note ${i})`;
}

export function queryText(r: () => number): string {
  const words = [zipfPick(TOPICS, r), zipfPick(TOOLS, r), zipfPick(PEOPLE, r), zipfPick(THINGS, r), zipfPick(PLACES, r)];
  const n = 2 + Math.floor(r() * 3);
  const picked: string[] = [];
  while (picked.length < n) picked.push(words[Math.floor(r() * words.length)]!);
  return `what about ${picked.join(" and ")}?`;
}
