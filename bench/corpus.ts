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

// ---- scale corpus ------------------------------------------------------------------------------
// A conversation-shaped corpus for the scale benchmark (bench/scale.ts): sessions of turns about a
// topic, words drawn from a Zipf(1.0) vocabulary of synthetic words plus English function words,
// person and place names, numbers and dates, spread over several users and projects with most of
// it in the first user's scope. Deterministic for a seed; generates ~1M turns in a few seconds.

const SYLLABLES = ["ka", "lo", "ven", "tri", "mar", "sol", "bek", "dra", "fin", "gor", "hal", "isk", "jun", "kel", "lum", "mor", "nix", "ost", "pra", "quil", "ros", "sten", "tav", "ull", "vor", "wen", "xan", "yil", "zor", "bri", "cha", "del", "eth", "fal", "gri", "hov", "ilt", "jor", "kru", "lan"];
const FIRST = ["Alice", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Gustav", "Hana", "Ilya", "Jonas", "Keiko", "Lars", "Marisol", "Nadia", "Omar", "Paloma", "Quentin", "Rosa", "Sanjay", "Tomasz", "Ulla", "Vikram", "Wanjiru", "Xiomara", "Yusuf", "Zofia", "Amara", "Bastian", "Camila", "Dmitri", "Elif", "Felix", "Giulia", "Hector", "Ines", "Jamal"];
const LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Kowalski", "Nguyen", "Silva", "Brennan", "Castillo", "Dubois", "Eriksen", "Fischer", "Gallagher", "Horvat", "Ivanova", "Jensen", "Kaur", "Laurent", "Mendes", "Novak", "Oyelaran", "Petrov", "Quinn", "Rossi", "Sato", "Tremblay", "Usman", "Varga", "Weber"];
const CITIES = ["Lisbon", "Nairobi", "Osaka", "Valparaiso", "Tbilisi", "Quebec", "Bergen", "Cusco", "Hanoi", "Kraków", "Marrakesh", "Reykjavik", "Tallinn", "Zanzibar", "Ghent", "Bilbao", "Porto", "Dakar", "Hobart", "Leipzig", "Medellín", "Sapporo", "Trieste", "Windhoek"];
const FUNCTION = ["the", "a", "and", "to", "of", "in", "for", "with", "on", "at", "about", "that", "it", "was", "is", "we", "my", "our", "after", "before", "again", "really", "just", "so"];
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const UNITS = ["euros", "dollars", "minutes", "hours", "kilometres", "pages", "people", "days", "tickets", "boxes"];

/** Cumulative Zipf(s) weights over `n` ranks, for inverse-CDF sampling. */
function zipfCdf(n: number, s: number): Float64Array {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) cdf[i] = acc += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < n; i++) cdf[i]! /= acc;
  return cdf;
}

function sampleCdf(cdf: Float64Array, r: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface ScaleMemory {
  /** 0 = the searched user */
  user: number;
  project: number;
  session: number;
  /** "user" | "project" | "session" for the whole session, so neighbours share a scope */
  level: "user" | "project" | "session";
  turn: number;
  content: string;
  /** ms since epoch: the day the session took place */
  date: number;
  /** query material taken from this turn */
  rare: string;
  name: string | null;
  number: string | null;
  words: string[];
}

export interface ScaleCorpusOptions {
  seed: number;
  users?: number;
  projectsPerUser?: number;
  /** share of memories owned by user 0 */
  mainShare?: number;
  vocabulary?: number;
}

export class ScaleCorpus {
  readonly vocab: string[];
  private readonly cdf: Float64Array;
  private readonly r: () => number;
  private readonly users: number;
  private readonly projects: number;
  private readonly mainShare: number;
  private sessionNo = 0;
  private left = 0;
  private cur!: { user: number; project: number; session: number; level: ScaleMemory["level"]; topic: number[]; people: string[]; place: string; date: number; turn: number };

  constructor(o: ScaleCorpusOptions) {
    this.r = rng(o.seed);
    this.users = o.users ?? 6;
    this.projects = o.projectsPerUser ?? 3;
    this.mainShare = o.mainShare ?? 0.7;
    const n = o.vocabulary ?? 60_000;
    const seen = new Set<string>();
    this.vocab = [];
    const vr = rng(0x5eed);
    while (this.vocab.length < n) {
      const k = 2 + Math.floor(vr() * 3);
      let w = "";
      for (let i = 0; i < k; i++) w += SYLLABLES[Math.floor(vr() * SYLLABLES.length)]!;
      if (!seen.has(w)) {
        seen.add(w);
        this.vocab.push(w);
      }
    }
    this.cdf = zipfCdf(n, 1.0);
  }

  /** vocabulary rank of a word (0 = most frequent) */
  word(rank: number): string {
    return this.vocab[rank]!;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }

  private zipfRank(): number {
    return sampleCdf(this.cdf, this.r());
  }

  private person(): string {
    // Names are skewed too: a few people come up in many conversations.
    const i = Math.floor(FIRST.length * Math.pow(this.r(), 1.6));
    return this.r() < 0.5 ? `${FIRST[i]!} ${this.pick(LAST)}` : FIRST[i]!;
  }

  private startSession(): void {
    const main = this.r() < this.mainShare;
    const user = main ? 0 : 1 + Math.floor(this.r() * (this.users - 1));
    const lr = this.r();
    this.cur = {
      user,
      project: Math.floor(this.r() * this.projects),
      session: this.sessionNo++,
      level: lr < 0.6 ? "user" : lr < 0.9 ? "project" : "session",
      // Topic words come from the middle of the vocabulary: specific, recurring within a session.
      topic: Array.from({ length: 4 }, () => 200 + Math.floor(this.r() * 8000)),
      people: [this.person(), this.person()],
      place: this.pick(CITIES),
      date: Date.UTC(2019, 0, 1) + Math.floor(this.r() * 6 * 365) * 86_400_000,
      turn: 0,
    };
    this.left = 8 + Math.floor(this.r() * 40);
  }

  /** The next turn (memory) of the corpus. */
  next(): ScaleMemory {
    if (this.left-- <= 0) this.startSession();
    const c = this.cur;
    const ranks: number[] = [];
    const w = () => {
      const rank = this.r() < 0.35 ? this.pick(c.topic) : this.zipfRank();
      ranks.push(rank);
      return this.vocab[rank]!;
    };
    const fn = () => this.pick(FUNCTION);
    let name: string | null = null;
    let number: string | null = null;
    const who = () => (name = this.r() < 0.7 ? this.pick(c.people) : this.person());
    const num = () => (number = String(2 + Math.floor(Math.pow(this.r(), 2) * 5000)));
    const d = new Date(c.date + Math.floor(this.r() * 30) * 86_400_000);
    const dateText = () => (number = `${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`);
    const t = Math.floor(this.r() * 8);
    let s: string;
    switch (t) {
      case 0:
        s = `I talked with ${who()} about the ${w()} ${w()} in ${c.place} on ${dateText()}.`;
        break;
      case 1:
        s = `${who()} said the ${w()} costs ${num()} ${this.pick(UNITS)} now, ${fn()} ${w()} ${w()}.`;
        break;
      case 2:
        s = `We moved the ${w()} ${w()} meeting to ${this.pick(WEEKDAYS)} at ${1 + Math.floor(this.r() * 12)} pm with ${who()}.`;
        break;
      case 3:
        s = `My ${w()} and ${w()} were ${w()} after ${num()} days in ${c.place}.`;
        break;
      case 4:
        s = `Remember that ${who()} prefers ${w()} ${w()} over ${w()} ${fn()} ${w()}.`;
        break;
      case 5:
        s = `${w()} ${fn()} ${w()} ${w()} ${fn()} ${w()} ${w()} ${fn()} ${w()}?`;
        break;
      case 6:
        s = `Yes, the ${w()} from ${c.place} ${fn()} ${w()} ${w()}; ${who()} brought ${num()} of them.`;
        break;
      default:
        s = `${fn()} ${w()} ${w()} ${fn()} ${w()} ${fn()} ${w()} ${w()} ${w()} ${fn()} ${w()}.`;
    }
    const content = `${c.turn % 2 === 0 ? "Me" : "Assistant"}: ${s.charAt(0).toUpperCase()}${s.slice(1)}`;
    const rareRank = Math.max(...ranks);
    return {
      user: c.user,
      project: c.project,
      session: c.session,
      level: c.level,
      turn: c.turn++,
      content,
      date: d.getTime(),
      rare: this.vocab[rareRank]!,
      name,
      number,
      words: ranks.map((x) => this.vocab[x]!),
    };
  }

  /** A common word: one of the ~100 most frequent content words. */
  commonWord(): string {
    return this.vocab[Math.floor(this.r() * 100)]!;
  }

  random(): number {
    return this.r();
  }
}
