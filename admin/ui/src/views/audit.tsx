// Audit timeline: every change to memories, skills and toggles, newest first, filterable, paged.
// The log is append-only; forgotten content never appears here, only that a forget happened.
import { useState } from "preact/hooks";
import type { AuditEntry } from "../../../api/contract.js";
import { Empty, ErrorNote, Loading, Select, When } from "../components/common.js";
import { useResource } from "../components/resource.js";
import { useLive, useTick } from "../live.js";

const TARGETS = ["memory", "skill", "toolset"] as const;

export function AuditView() {
  const { api } = useLive();
  const tick = useTick("audit");
  const [target, setTarget] = useState<(typeof TARGETS)[number] | "">("");
  const [actorDraft, setActorDraft] = useState("");
  const [actionDraft, setActionDraft] = useState("");
  const [q, setQ] = useState({ actor: "", action: "" });
  const [pages, setPages] = useState(1);
  const r = useResource(async () => {
    let entries: AuditEntry[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < pages; i++) {
      const res = await api.call("MemoryAdmin", "QueryAudit", {
        targetKinds: target ? [target] : undefined,
        actor: q.actor || undefined,
        actions: q.action ? q.action.split(/[,\s]+/).filter(Boolean) : undefined,
        pageSize: 100,
        cursor,
      });
      entries = entries.concat(res.entries);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return { entries, more: cursor !== undefined };
  }, [target, q, pages, tick]);

  return (
    <>
      <h2 id="view-title">Audit timeline</h2>
      <section class="panel" aria-label="Audit log">
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            setPages(1);
            setQ({ actor: actorDraft.trim(), action: actionDraft.trim() });
          }}
        >
          <Select
            id="audit-target"
            label="What"
            value={target}
            options={TARGETS}
            onChange={(v) => {
              setPages(1);
              setTarget(v);
            }}
            anyLabel="everything"
          />
          <label class="field" for="audit-action">
            <span>Actions (comma-separated)</span>
            <input id="audit-action" type="text" value={actionDraft} placeholder="forget, publish…" onInput={(e) => setActionDraft((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label class="field" for="audit-actor">
            <span>Actor</span>
            <input id="audit-actor" type="text" value={actorDraft} placeholder="admin:alice, model…" onInput={(e) => setActorDraft((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="primary">
            Filter
          </button>
          <Loading on={r.loading} />
        </form>
        <ErrorNote error={r.error} what="Could not load the audit log" />
        {r.data ? <AuditList entries={r.data.entries} /> : null}
        {r.data?.more ? (
          <div class="actions">
            <button type="button" onClick={() => setPages(pages + 1)}>
              Older entries
            </button>
          </div>
        ) : null}
      </section>
    </>
  );
}

/** Audit rows as a timeline: when, who, what, and the change's details. */
export function AuditList({ entries }: { entries: AuditEntry[] }) {
  if (entries.length === 0) return <Empty>No audit entries.</Empty>;
  return (
    <ol class="timeline" aria-label="Audit entries">
      {entries.map((e) => (
        <li key={e.seq} data-action={e.action}>
          <When at={e.at} />
          <span>
            <strong>{e.action}</strong>
            <br />
            <span class="muted">{e.actor}</span>
          </span>
          <span>
            {e.targetKind} <code>{e.targetId}</code>
            {Object.keys(e.detail).length ? <span class="muted"> · {summarize(e.detail)}</span> : null}
          </span>
        </li>
      ))}
    </ol>
  );
}

function summarize(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    // scope keys written before schema 18 join their parts with NUL; show a readable separator instead
    .map(([k, v]) => `${k}: ${(typeof v === "string" ? v : JSON.stringify(v)).replace(/\u0000|\\u0000/g, " / ")}`)
    .join(" · ")
    .slice(0, 300);
}
