// Pending memories: candidates the learning loop extracted and writes flagged by the safety scan,
// each with the messages it came from; a person confirms (becomes active, user_confirmed) or
// rejects (forgotten, after a confirm step).
import { useState } from "preact/hooks";
import type { Memory } from "../../../api/contract.js";
import { ConfirmDialog } from "../components/dialog.js";
import { Badge, Empty, ErrorNote, Loading, When, pct } from "../components/common.js";
import { useAction, useResource } from "../components/resource.js";
import { useLive, useTick } from "../live.js";
import { SourceMessages } from "./memories.js";

export function PendingView() {
  const { api } = useLive();
  const tick = useTick("pending");
  const list = (cursor: string | undefined) => api.call("MemoryAdmin", "ListPending", { pageSize: 100, cursor });
  // each "more" click adds a page; a refresh re-reads all pages shown so far
  const [pages, setPages] = useState(1);
  const r = useResource(async () => {
    let items: Awaited<ReturnType<typeof list>>["items"] = [];
    let cursor: string | undefined;
    let last: Awaited<ReturnType<typeof list>> | null = null;
    for (let i = 0; i < pages; i++) {
      last = await list(cursor);
      items = items.concat(last.items);
      cursor = last.nextCursor;
      if (!cursor) break;
    }
    return { ...last!, items, nextCursor: cursor };
  }, [tick, pages]);
  const act = useAction();
  const [rejecting, setRejecting] = useState<Memory | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const confirm = async (m: Memory) => {
    setDone(null);
    if (await act.run(() => api.call("MemoryAdmin", "ConfirmPending", { ids: [m.id] }))) {
      setDone(`Confirmed: “${m.content.slice(0, 80)}” is now an active memory.`);
      r.reload();
    }
  };

  return (
    <>
      <h2 id="view-title">Pending memories</h2>
      <section class="panel" aria-label="Pending memories">
        <p class="muted">
          {r.data ? `${r.data.total}${r.data.totalCapped ? "+" : ""} waiting for a person's decision.` : ""} Confirming makes a memory active and marks it user-confirmed; rejecting forgets it.
          <Loading on={r.loading} />
        </p>
        <ErrorNote error={r.error} what="Could not load pending memories" />
        <ErrorNote error={act.error} what="The change failed" />
        {done ? (
          <p class="muted" role="status">
            {done}
          </p>
        ) : null}
        {r.data && r.data.items.length === 0 ? <Empty>Nothing is pending.</Empty> : null}
        <ul class="list">
          {r.data?.items.map(({ memory: m, messages, episodes, conflicts }) => (
            <li key={m.id} data-memory-id={m.id} aria-label={`Pending memory: ${m.content.slice(0, 80)}`}>
              <div class="grid2">
                <div>
                  <blockquote>{m.content}</blockquote>
                  <div class="badges">
                    <Badge kind={m.kind}>{m.kind}</Badge>
                    <Badge kind={m.scope.level}>{m.scope.level} scope</Badge>
                    <Badge kind={m.trust}>{m.trust.replace(/_/g, " ")}</Badge>
                    {m.flags.map((fl) => (
                      <Badge key={fl} kind={fl}>
                        {fl.replace(/_/g, " ")}
                      </Badge>
                    ))}
                    <span class="muted">
                      confidence {pct(m.confidence)} · <When at={m.createdAt} />
                    </span>
                  </div>
                  {conflicts.length ? (
                    <>
                      <h3>Conflicts with</h3>
                      <ul class="list">
                        {conflicts.map((c) => (
                          <li key={c.id}>{c.content}</li>
                        ))}
                      </ul>
                    </>
                  ) : null}
                  {episodes.length ? (
                    <p class="muted">
                      From {episodes.length === 1 ? "the task" : "the tasks"}: {episodes.map((e) => `“${e.task}”`).join(", ")}
                    </p>
                  ) : null}
                  <div class="actions">
                    <button type="button" class="primary" disabled={act.busy} aria-label={`Confirm: ${m.content.slice(0, 60)}`} onClick={() => confirm(m)}>
                      Confirm
                    </button>
                    <button type="button" disabled={act.busy} aria-label={`Reject: ${m.content.slice(0, 60)}`} onClick={() => setRejecting(m)}>
                      Reject…
                    </button>
                  </div>
                </div>
                <div>
                  <h3>Source messages</h3>
                  <SourceMessages messages={messages} />
                </div>
              </div>
            </li>
          ))}
        </ul>
        {r.data?.nextCursor ? (
          <div class="actions">
            <button type="button" onClick={() => setPages(pages + 1)}>
              Show more
            </button>
          </div>
        ) : null}
      </section>
      <ConfirmDialog
        open={rejecting !== null}
        title="Reject this pending memory?"
        confirmLabel="Reject and forget"
        danger
        busy={act.busy}
        onCancel={() => setRejecting(null)}
        onConfirm={async () => {
          const m = rejecting!;
          const ok = await act.run(() => api.call("MemoryAdmin", "RejectPending", { ids: [m.id] }));
          setRejecting(null);
          if (ok) {
            setDone(`Rejected and forgotten: “${m.content.slice(0, 80)}”.`);
            r.reload();
          }
        }}
      >
        <p>It is forgotten: removed from the store and every index.</p>
        <blockquote>{rejecting?.content}</blockquote>
      </ConfirmDialog>
    </>
  );
}
