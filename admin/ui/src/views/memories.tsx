// Memories: search and filter, one memory's versions, conflicts, sources and audit, and forget
// (after a confirm step). Re-fetches when the stream says memories changed.
import { useState } from "preact/hooks";
import type { Memory } from "../../../api/contract.js";
import { ConfirmDialog } from "../components/dialog.js";
import { Badge, Empty, ErrorNote, Loading, Select, When, pct } from "../components/common.js";
import { useAction, useResource } from "../components/resource.js";
import { useLive, useTick } from "../live.js";
import { AuditList } from "./audit.js";

const SCOPES = ["user", "project", "session", "thread"] as const;
const KINDS = ["fact", "preference", "project", "lesson", "procedure", "note"] as const;
const TRUSTS = ["user_confirmed", "user_stated", "model_inferred", "tool_output", "imported"] as const;
const STATUSES = ["pending", "active", "superseded", "expired", "deleted"] as const;

type Scope = (typeof SCOPES)[number];
type Kind = (typeof KINDS)[number];
type TrustLevel = (typeof TRUSTS)[number];
type Status = (typeof STATUSES)[number];

interface Filters {
  query: string;
  scope: Scope | "";
  kind: Kind | "";
  trust: TrustLevel | "";
  status: Status | "";
}

export function MemoriesView() {
  const { api } = useLive();
  const tick = useTick("memories");
  const [draft, setDraft] = useState("");
  const [f, setF] = useState<Filters>({ query: "", scope: "", kind: "", trust: "", status: "" });
  const [pages, setPages] = useState<string[]>([]);
  const [selected, setSelected] = useState<string | null>(null);

  const one = <T,>(v: T | "") => (v ? [v] : undefined);
  const list = useResource(async () => {
    if (f.query.trim()) {
      const history = f.status === "superseded" || f.status === "expired";
      // the list's default is active + pending: search pending candidates too, as the filter says
      const pending = f.status === "" || f.status === "pending";
      const r = await api.call("MemoryAdmin", "SearchMemories", {
        query: f.query.trim(),
        scopes: one(f.scope),
        kinds: one(f.kind),
        trusts: one(f.trust),
        includeHistory: history || undefined,
        includePending: pending || undefined,
        limit: 50,
      });
      const rows = r.hits.map((h) => h.memory).filter((m) => !f.status || m.status === f.status);
      return { memories: rows, nextCursor: undefined as string | undefined, total: String(rows.length), searched: true };
    }
    // each "more" click adds a page; a refresh re-reads all pages shown so far. With a trust
    // filter the server reads a bounded number of records a call, so a page can come back empty
    // with more to read: keep reading (a while) rather than say nothing matches.
    let memories: Memory[] = [];
    let cursor: string | undefined;
    let total: string | undefined;
    for (let i = 0; i <= pages.length || (memories.length === 0 && i < pages.length + 20); i++) {
      const r = await api.call("MemoryAdmin", "ListMemories", {
        scopes: one(f.scope),
        kinds: one(f.kind),
        trusts: one(f.trust),
        statuses: one(f.status),
        pageSize: 50,
        cursor: i === 0 ? undefined : cursor,
      });
      memories = memories.concat(r.memories);
      cursor = r.nextCursor;
      // a large view counts up to a cap ("10000+")
      total = r.total === undefined ? undefined : `${r.total}${r.totalCapped ? "+" : ""}`;
      if (!cursor) break;
    }
    return { memories, nextCursor: cursor, total, searched: false };
  }, [f, pages.length, tick]);

  const setFilter = (patch: Partial<Filters>) => {
    setPages([]);
    setF({ ...f, ...patch });
  };

  return (
    <>
      <h2 id="view-title">Memories</h2>
      <div class="split">
        <section class="panel" aria-label="Memory list">
          <form
            class="toolbar"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setFilter({ query: draft });
            }}
          >
            <label class="field grow" for="mem-q">
              <span>Search</span>
              <input id="mem-q" type="search" value={draft} placeholder="words from the memory…" onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)} />
            </label>
            <button type="submit" class="primary">
              Search
            </button>
            {f.query ? (
              <button
                type="button"
                onClick={() => {
                  setDraft("");
                  setFilter({ query: "" });
                }}
              >
                Clear
              </button>
            ) : null}
          </form>
          <div class="toolbar">
            <Select id="mem-scope" label="Scope" value={f.scope} options={SCOPES} onChange={(v) => setFilter({ scope: v })} />
            <Select id="mem-kind" label="Kind" value={f.kind} options={KINDS} onChange={(v) => setFilter({ kind: v })} />
            <Select id="mem-trust" label="Trust" value={f.trust} options={TRUSTS} onChange={(v) => setFilter({ trust: v })} />
            <Select id="mem-status" label="Status" value={f.status} options={STATUSES} onChange={(v) => setFilter({ status: v })} anyLabel="active + pending" />
            <Loading on={list.loading} />
          </div>
          <ErrorNote error={list.error} what="Could not load memories" />
          {list.data ? (
            list.data.memories.length === 0 && !list.data.nextCursor ? (
              <Empty>{f.query ? `Nothing matches “${f.query}” with these filters.` : "No memories with these filters."}</Empty>
            ) : (
              <>
                <p class="muted">
                  {list.data.searched ? `${list.data.memories.length} best matches` : `${list.data.memories.length}${list.data.total !== undefined ? ` of ${list.data.total}` : ""} shown`}
                </p>
                {list.data.memories.length ? (
                  <MemoryTable rows={list.data.memories} selected={selected} onSelect={setSelected} />
                ) : (
                  <Empty>None of the memories read so far match these filters; there are more to look through.</Empty>
                )}
                {list.data.nextCursor ? (
                  <div class="actions">
                    <button type="button" onClick={() => setPages([...pages, list.data!.nextCursor!])}>
                      Show more
                    </button>
                  </div>
                ) : null}
              </>
            )
          ) : null}
        </section>
        <section class="panel" aria-label="Memory details">
          {selected ? <MemoryDetail
              key={selected}
              id={selected}
              onGone={() => {
                setSelected(null);
                list.reload();
              }}
              onOpen={(next) => {
                setSelected(next);
                list.reload();
              }}
            /> : <Empty>Choose a memory to see its versions, conflicts, sources and audit trail.</Empty>}
        </section>
      </div>
    </>
  );
}

function MemoryTable({ rows, selected, onSelect }: { rows: Memory[]; selected: string | null; onSelect: (id: string) => void }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Memory</th>
          <th scope="col">Kind · scope</th>
          <th scope="col">Trust</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.id} class={m.id === selected ? "selected" : ""} data-memory-id={m.id}>
            <td class="content-cell">
              <button type="button" class="link" aria-label={`Open memory: ${m.content.slice(0, 80)}`} aria-pressed={m.id === selected} onClick={() => onSelect(m.id)}>
                {m.content.length > 140 ? `${m.content.slice(0, 140)}…` : m.content}
              </button>
              <div class="badges">
                {m.status !== "active" ? <Badge kind={m.status}>{m.status}</Badge> : null}
                {m.flags.map((fl) => (
                  <Badge key={fl} kind={fl}>
                    {fl.replace(/_/g, " ")}
                  </Badge>
                ))}
                {m.version > 1 ? <Badge kind="version">v{m.version}</Badge> : null}
              </div>
            </td>
            <td>
              {m.kind} · {m.scope.level}
            </td>
            <td>
              <Badge kind={m.trust}>{m.trust.replace(/_/g, " ")}</Badge>
            </td>
            <td>
              <When at={m.updatedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function MemoryDetail({ id, onGone, onOpen }: { id: string; onGone: () => void; onOpen: (id: string) => void }) {
  const { api } = useLive();
  const tick = useTick("memories");
  const r = useResource(() => api.call("MemoryAdmin", "GetMemory", { id }), [id, tick]);
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const act = useAction();
  const d = r.data;
  if (!d) return r.error ? <ErrorNote error={r.error} what="Could not load this memory" /> : <Loading on={true} />;
  const m = d.memory;
  const gone = m.status === "deleted";
  return (
    <article aria-labelledby="mem-title">
      <h3 id="mem-title">
        Memory <code>{m.id}</code> <Badge kind={m.status}>{m.status}</Badge>
      </h3>
      <ErrorNote error={r.error} what="Could not refresh" />
      <blockquote data-testid="memory-content">{m.content || "(forgotten)"}</blockquote>
      <dl class="kv">
        <dt>Kind</dt>
        <dd>{m.kind}</dd>
        <dt>Scope</dt>
        <dd>
          {m.scope.level} · user {m.scope.user}
          {m.scope.project ? ` · project ${m.scope.project}` : ""}
          {m.scope.session ? ` · session ${m.scope.session}` : ""}
          {m.scope.thread ? ` · thread ${m.scope.thread}` : ""}
        </dd>
        <dt>Trust</dt>
        <dd>
          {m.trust.replace(/_/g, " ")} · confidence {pct(m.confidence)}
        </dd>
        <dt>Version</dt>
        <dd>v{m.version}</dd>
        <dt>Tags</dt>
        <dd>{m.tags.length ? m.tags.join(", ") : "—"}</dd>
        <dt>Valid</dt>
        <dd>
          <When at={m.validFrom} /> → <When at={m.validTo} />
        </dd>
        <dt>Created</dt>
        <dd>
          <When at={m.createdAt} />
        </dd>
        <dt>Expires</dt>
        <dd>
          <When at={m.expiresAt} />
        </dd>
      </dl>
      {!gone ? (
        <div class="actions">
          {m.status === "active" ? (
            <button type="button" onClick={() => setEditing(m.content)}>
              Correct…
            </button>
          ) : null}
          <button type="button" class="danger" onClick={() => setAsking(true)}>
            Forget…
          </button>
        </div>
      ) : null}
      <ErrorNote error={act.error} what="The change failed" />
      <ConfirmDialog
        open={editing !== null}
        title="Correct this memory"
        confirmLabel="Save as a new version"
        busy={act.busy}
        onCancel={() => setEditing(null)}
        onConfirm={async () => {
          let next: string | null = null;
          const ok = await act.run(async () => {
            next = (await api.call("MemoryAdmin", "UpdateMemory", { id: m.id, content: (editing ?? "").trim() })).memory.id;
          });
          setEditing(null);
          if (ok && next) onOpen(next);
        }}
      >
        <p>The current text stays in the history as a superseded version.</p>
        <label class="field" for="edit-content">
          <span>Content</span>
          <textarea id="edit-content" rows={4} value={editing ?? ""} onInput={(e) => setEditing((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking}
        title="Forget this memory?"
        confirmLabel="Forget"
        danger
        busy={act.busy}
        onCancel={() => setAsking(false)}
        onConfirm={async () => {
          const ok = await act.run(() => api.call("MemoryAdmin", "ForgetMemory", { ids: [m.id], reason: reason.trim() || undefined }));
          setAsking(false);
          if (ok) onGone();
        }}
      >
        <p>
          Every version of it is purged from the store, the word and vector indexes and derived artifacts. The audit log keeps only the fact that it was forgotten. This cannot be undone.
        </p>
        <blockquote>{m.content}</blockquote>
        <label class="field" for="forget-reason">
          <span>Reason (optional, kept in the audit log)</span>
          <input id="forget-reason" type="text" value={reason} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} />
        </label>
      </ConfirmDialog>

      <h3>Versions</h3>
      <ol class="list">
        {d.versions.map((v) => (
          <li key={v.id}>
            <span class="badges">
              <Badge kind="version">v{v.version}</Badge>
              <Badge kind={v.status}>{v.status}</Badge>
            </span>{" "}
            <When at={v.createdAt} /> — {v.content || <em class="muted">(forgotten)</em>}
          </li>
        ))}
      </ol>

      <h3>Conflicts</h3>
      {d.conflicts.length === 0 ? (
        <Empty>No conflicting memory.</Empty>
      ) : (
        <ul class="list">
          {d.conflicts.map((c) => (
            <li key={c.id}>
              <button type="button" class="link" onClick={() => onOpen(c.id)}>
                {c.content}
              </button>{" "}
              <Badge kind={c.trust}>{c.trust.replace(/_/g, " ")}</Badge>
            </li>
          ))}
        </ul>
      )}

      <h3>Where it came from</h3>
      <SourceMessages messages={d.messages} />
      <ul class="list">
        {m.sources.map((s, i) => (
          <li key={i}>
            {s.actor}
            {s.threadId ? ` · thread ${s.threadId}` : ""}
            {s.toolCallId ? ` · call ${s.toolCallId}` : ""} · <When at={s.at} />
          </li>
        ))}
      </ul>
      {d.episodes.length ? (
        <>
          <h3>Episodes</h3>
          <ul class="list">
            {d.episodes.map((e) => (
              <li key={e.id}>
                {e.task} <span class="muted">({e.disposition}{e.reward !== undefined ? `, reward ${e.reward.toFixed(2)}` : ""})</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}

      <h3>Audit</h3>
      <AuditList entries={d.audit} />
    </article>
  );
}

export function SourceMessages({ messages }: { messages: { threadId: string; messageId: string; role?: string | undefined; text?: string | undefined; at?: string | undefined }[] }) {
  if (messages.length === 0) return <Empty>No source messages recorded.</Empty>;
  return (
    <ul class="list" aria-label="Source messages">
      {messages.map((msg) => (
        <li key={msg.messageId}>
          <span class="muted">
            {msg.role ?? "message"} · thread {msg.threadId}
            {msg.at ? " · " : ""}
            {msg.at ? <When at={msg.at} /> : null}
          </span>
          <blockquote>{msg.text ?? <em>(text not in the session index: message {msg.messageId})</em>}</blockquote>
        </li>
      ))}
    </ul>
  );
}
