// Store interfaces in the style of Infinity's traits (async, one error class per adapter).
// Only stores/*/ implement these; core/ depends on nothing but this file.
import type {
  MemoryKind,
  MemoryRecord,
  MemorySource,
  MemoryStatus,
  NewMemory,
  ScopeLevel,
  Trust,
} from "../core/memory/record.js";

export class StoreError extends Error {
  constructor(
    readonly code: "not_found" | "constraint" | "io" | "schema",
    message: string,
  ) {
    super(message);
    this.name = "StoreError";
  }
}

/**
 * Which records a query may touch. `keys`: the visibility keys of a request (thread view; see
 * core/memory/scope.ts). `owner`: every record of one user, optionally narrowed to a project
 * (the person's own view through the CLI).
 */
export type Visibility = { keys: string[] } | { owner: string; project?: string | null };

/** Lexical query, already analysed by core/retrieval/query.ts. */
export interface LexicalQuery {
  /** word terms (lower-cased, stop words removed); the store's porter tokenizer stems them */
  terms: string[];
  /** CJK bigrams for the CJK column */
  cjk: string[];
  /** substrings of ≥3 chars for the trigram channel (partial words, CJK runs) */
  trigrams: string[];
}

export interface SearchQuery {
  visibility: Visibility;
  query: LexicalQuery;
  kinds?: MemoryKind[] | undefined;
  levels?: ScopeLevel[] | undefined;
  /** statuses to include; expiry is applied on top using `now` unless "expired" is listed */
  statuses: MemoryStatus[];
  includeFlagged: boolean;
  now: number;
  limit: number;
}

export interface SearchHit {
  record: MemoryRecord;
  /** higher is better; comparable within one result list only */
  score: number;
  channel: "lexical" | "trigram" | "both";
}

export interface ListQuery {
  visibility: Visibility;
  kinds?: MemoryKind[] | undefined;
  levels?: ScopeLevel[] | undefined;
  statuses: MemoryStatus[];
  includeFlagged: boolean;
  now: number;
  limit: number;
  /** opaque cursor from a previous page */
  cursor?: string | undefined;
  order: "newest" | "oldest";
}

export interface ListPage {
  items: MemoryRecord[];
  nextCursor: string | null;
  total: number;
}

export type AuditAction =
  | "create"
  | "duplicate"
  | "update"
  | "supersede"
  | "confirm"
  | "reject"
  | "forget"
  | "expire"
  | "toggle";

/** Append-only; never holds forgotten content. */
export interface AuditEntry {
  at: number;
  actor: string;
  action: AuditAction;
  targetKind: "memory" | "toolset";
  targetId: string;
  detail: Record<string, unknown>;
}

export interface StoredAuditEntry extends AuditEntry {
  seq: number;
}

export type EdgeRelation = "supersedes" | "conflicts_with" | "derived_from";

export interface Edge {
  src: string;
  dst: string;
  relation: EdgeRelation;
  at: number;
}

export interface MemoryStore {
  insert(rec: NewMemory, audit: AuditEntry): Promise<MemoryRecord>;
  /** insert `next` as a new version of `previousId` and mark that one superseded, atomically */
  supersede(previousId: string, next: NewMemory, audit: AuditEntry): Promise<MemoryRecord>;
  get(id: string): Promise<MemoryRecord | null>;
  /** the non-deleted record with this content hash under the same visibility key, if any */
  findDuplicate(visibilityKey: string, contentHash: string): Promise<MemoryRecord | null>;
  /** the record written by this tool call in this thread (idempotent replays) */
  findByToolCall(threadId: string, toolCallId: string): Promise<MemoryRecord | null>;
  addSource(id: string, source: MemorySource, audit: AuditEntry): Promise<void>;
  search(q: SearchQuery): Promise<SearchHit[]>;
  list(q: ListQuery): Promise<ListPage>;
  /** every version sharing a lineage, oldest first */
  lineage(lineageId: string): Promise<MemoryRecord[]>;
  setStatus(id: string, status: MemoryStatus, trust: Trust | null, audit: AuditEntry): Promise<MemoryRecord>;
  /** tombstone + purge content from every index, source, tag and edge payload; returns ids purged */
  forget(ids: string[], audit: AuditEntry): Promise<string[]>;
  /** mark records whose expires_at passed as expired; returns how many */
  expireDue(now: number, actor: string): Promise<number>;
  addEdge(edge: Edge): Promise<void>;
  edgesOf(id: string): Promise<Edge[]>;
  audit(targetId: string, limit: number): Promise<StoredAuditEntry[]>;
  /** all exportable (non-deleted) records visible under `visibility`, oldest first */
  exportAll(visibility: Visibility): AsyncIterable<MemoryRecord>;
  close(): void;
}

/** Per-thread enable/disable of a toolset; children inherit unless set. */
export interface ToggleStore {
  set(toolset: string, threadId: string, enabled: boolean | null, audit: AuditEntry): Promise<void>;
  /** nearest explicit setting along [thread, parent, …, root]; null when none */
  resolve(toolset: string, threadChainNearestFirst: string[]): Promise<boolean | null>;
}
