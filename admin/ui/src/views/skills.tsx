// Skills: candidates waiting for a decision (eval report + diff, approve/reject), the catalog, and
// one skill's versions, diff between any two, η and trial history, eval reports, rollback, pin and
// per-scope enable/disable.
import { useEffect, useState } from "preact/hooks";
import type { EvalReport, SkillVersion } from "../../../api/contract.js";
import { BarChart, LineChart } from "../components/charts.js";
import { Badge, Empty, ErrorNote, Loading, When, num, pct } from "../components/common.js";
import { ConfirmDialog } from "../components/dialog.js";
import { DiffView } from "../components/diff-view.js";
import { useAction, useResource } from "../components/resource.js";
import { useLive, useTick } from "../live.js";
import { AuditList } from "./audit.js";

export function SkillsView() {
  const { api } = useLive();
  const tick = useTick("skills", "candidates");
  const [selected, setSelected] = useState<string | null>(null);
  const list = useResource(() => api.call("SkillAdmin", "ListSkills", {}), [tick]);
  const [nonce, setNonce] = useState(0);
  const changed = () => {
    list.reload();
    setNonce((n) => n + 1);
  };
  return (
    <>
      <h2 id="view-title">Skills</h2>
      <Candidates onChanged={changed} nonce={nonce} />
      <div class="split">
        <section class="panel" aria-labelledby="catalog-h">
          <h3 id="catalog-h">
            Catalog <Loading on={list.loading} />
          </h3>
          <ErrorNote error={list.error} what="Could not load skills" />
          {list.data && list.data.skills.length === 0 ? <Empty>No skills yet.</Empty> : null}
          {list.data && list.data.skills.length ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Skill</th>
                  <th scope="col">Published</th>
                  <th scope="col">η</th>
                  <th scope="col">Waiting</th>
                </tr>
              </thead>
              <tbody>
                {list.data.skills.map((s) => (
                  <tr key={s.skill.id} class={s.skill.name === selected ? "selected" : ""} data-skill={s.skill.name}>
                    <td>
                      <button type="button" class="link" aria-pressed={s.skill.name === selected} onClick={() => setSelected(s.skill.name)}>
                        {s.skill.name}
                      </button>
                      {s.skill.pinned ? (
                        <>
                          {" "}
                          <Badge kind="pinned">pinned</Badge>
                        </>
                      ) : null}
                      <div class="muted">{s.published?.description.slice(0, 90)}</div>
                    </td>
                    <td>{s.published ? <VersionBadge v={s.published} /> : <span class="muted">none</span>}</td>
                    <td>{s.published ? num(s.published.eta) : "—"}</td>
                    <td>
                      {/* a retire or merge request waits with no candidate version: "0 candidate(s)" said nothing waited */}
                      {s.candidates > 0 ? (
                        <Badge kind="candidate">{s.candidates} candidate(s)</Badge>
                      ) : s.pendingRequests > 0 ? (
                        <Badge kind="candidate">{s.pendingRequests} request(s)</Badge>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </section>
        <section class="panel" aria-label="Skill details">
          {selected ? <SkillDetail key={selected} name={selected} onChanged={changed} nonce={nonce} /> : <Empty>Choose a skill to see its versions, diff, η and trials, and eval reports.</Empty>}
        </section>
      </div>
    </>
  );
}

function VersionBadge({ v }: { v: SkillVersion }) {
  return (
    <span class="badges">
      <Badge kind="version">v{v.seq}</Badge>
      <Badge kind={v.status}>{v.status}</Badge>
    </span>
  );
}

function Candidates({ onChanged, nonce }: { onChanged: () => void; nonce: number }) {
  const { api } = useLive();
  const tick = useTick("candidates", "skills");
  const r = useResource(() => api.call("SkillAdmin", "ListCandidates", { status: "pending" }), [tick, nonce]);
  const act = useAction();
  const [rejecting, setRejecting] = useState<{ requestId?: string; name: string; version?: string; label: string } | null>(null);
  const [reason, setReason] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const items = r.data?.items ?? [];
  return (
    <section class="panel" aria-labelledby="cand-h">
      <h3 id="cand-h">
        Candidates awaiting review {r.data ? `(${items.length})` : ""} <Loading on={r.loading} />
      </h3>
      <ErrorNote error={r.error} what="Could not load candidates" />
      <ErrorNote error={act.error} what="The decision failed" />
      {done ? (
        <p class="muted" role="status">
          {done}
        </p>
      ) : null}
      {r.data && items.length === 0 ? <Empty>No candidate is waiting.</Empty> : null}
      <ul class="list">
        {items.map((it) => {
          const label = `${it.skillName}${it.version ? ` v${it.version.seq}` : ""}`;
          const target = it.request ? { requestId: it.request.id } : { name: it.skillName, version: it.version ? `v${it.version.seq}` : undefined };
          return (
            <li key={it.request?.id ?? it.version?.id ?? it.skillName} data-candidate={it.skillName}>
              <strong>{label}</strong> {it.request ? <Badge kind="request">{it.request.kind}</Badge> : null}
              {it.version ? <> {it.version.description}</> : null}
              {it.version?.author ? <span class="muted"> · by {it.version.author}</span> : null}
              {it.report ? <ReportSummary report={it.report} /> : <p class="muted">No evaluation report.</p>}
              {it.diff !== undefined ? (
                <details>
                  <summary>Diff from the published version</summary>
                  <DiffView diff={it.diff} label={`Diff of ${label} against the published version`} />
                </details>
              ) : null}
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={act.busy}
                  aria-label={`Approve ${label}`}
                  onClick={async () => {
                    setDone(null);
                    if (await act.run(() => api.call("SkillAdmin", "ApproveCandidate", target))) {
                      setDone(`Approved ${label}: it is published as probationary.`);
                      onChanged();
                    }
                  }}
                >
                  Approve
                </button>
                <button type="button" disabled={act.busy} aria-label={`Reject ${label}`} onClick={() => setRejecting({ ...target, name: it.skillName, label })}>
                  Reject…
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      <ConfirmDialog
        open={rejecting !== null}
        title={`Reject ${rejecting?.label ?? ""}?`}
        confirmLabel="Reject"
        danger
        busy={act.busy}
        onCancel={() => setRejecting(null)}
        onConfirm={async () => {
          const t = rejecting!;
          const body = t.requestId ? { requestId: t.requestId, reason: reason.trim() || undefined } : { name: t.name, version: t.version, reason: reason.trim() || undefined };
          const ok = await act.run(() => api.call("SkillAdmin", "RejectCandidate", body));
          setRejecting(null);
          setReason("");
          if (ok) {
            setDone(`Rejected ${t.label}.`);
            onChanged();
          }
        }}
      >
        <p>The candidate version is kept for the record but never published.</p>
        <label class="field" for="reject-reason">
          <span>Reason (optional)</span>
          <input id="reject-reason" type="text" value={reason} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} />
        </label>
      </ConfirmDialog>
    </section>
  );
}

function ReportSummary({ report }: { report: EvalReport }) {
  return (
    <div class="report" aria-label={`Evaluation report ${report.id}`}>
      <p>
        <Badge kind={report.passed ? "passed" : "failed"}>{report.passed ? "passed the gate" : "failed the gate"}</Badge> candidate {pct(report.candidate.successRate)} vs baseline{" "}
        {pct(report.baseline.successRate)} · margin {num(report.margin)} (needs {num(report.requiredMargin)}) · {report.candidate.tasks.length} task(s) · <When at={report.createdAt} />
      </p>
      {report.reasons.length ? (
        <ul>
          {report.reasons.map((x, i) => (
            <li key={i}>{x}</li>
          ))}
        </ul>
      ) : null}
      {report.regressions.length ? <p class="error">Regressions: {report.regressions.join(", ")}</p> : null}
    </div>
  );
}

function ReportDetail({ report }: { report: EvalReport }) {
  const base = new Map(report.baseline.tasks.map((t) => [t.id, t]));
  return (
    <details>
      <summary>
        Report #{report.id} — {report.passed ? "passed" : "failed"}, <When at={report.createdAt} />
      </summary>
      <ReportSummary report={report} />
      <table>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">{report.candidate.label || "candidate"}</th>
            <th scope="col">{report.baseline.label || "baseline"}</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {report.candidate.tasks.map((t) => {
            const b = base.get(t.id);
            return (
              <tr key={t.id}>
                <td>
                  {t.id} <span class="muted">({t.kind})</span>
                </td>
                <td>
                  {t.completed ? "✓" : "✗"} {num(t.score)} · {t.steps} steps
                </td>
                <td>{b ? `${b.completed ? "✓" : "✗"} ${num(b.score)} · ${b.steps} steps` : "—"}</td>
                <td>{t.why}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {report.verification.length ? <p class="muted">Checks: {report.verification.join("; ")}</p> : null}
      <p class="muted">Model: {report.model}</p>
    </details>
  );
}

function SkillDetail({ name, onChanged, nonce }: { name: string; onChanged: () => void; nonce: number }) {
  const { api } = useLive();
  const tick = useTick("skills", "candidates");
  const r = useResource(() => api.call("SkillAdmin", "GetSkill", { name }), [name, tick, nonce]);
  const act = useAction();
  const [rollingBack, setRollingBack] = useState(false);
  const [level, setLevel] = useState<"user" | "project" | "session" | "thread">("user");
  const [key, setKey] = useState("");
  const d = r.data;
  if (!d) return r.error ? <ErrorNote error={r.error} what={`Could not load ${name}`} /> : <Loading on={true} />;
  const published = d.versions.find((v) => v.id === d.skill.publishedVersionId) ?? null;
  const previous = d.versions
    .filter((v) => v.liveOrder !== undefined && v.id !== published?.id)
    .sort((a, b) => (b.liveOrder ?? 0) - (a.liveOrder ?? 0))[0];
  const doit = async (fn: () => Promise<unknown>) => {
    if (await act.run(fn)) {
      r.reload();
      onChanged();
    }
  };
  const toggle = (enable: boolean, clear = false) =>
    doit(() => api.call("SkillAdmin", enable ? "EnableSkill" : "DisableSkill", { name, level, key: key.trim() || undefined, clear: clear || undefined }));
  return (
    <article aria-labelledby="skill-title">
      <h3 id="skill-title">
        {d.skill.name} {published ? <VersionBadge v={published} /> : <Badge kind="none">nothing published</Badge>}{" "}
        {d.skill.pinned ? <Badge kind="pinned">pinned</Badge> : null}
      </h3>
      <ErrorNote error={r.error} what="Could not refresh" />
      <ErrorNote error={act.error} what="The change failed" />
      <p>{published?.description}</p>
      <div class="actions">
        <button type="button" disabled={act.busy || !previous} onClick={() => setRollingBack(true)} title={previous ? undefined : "no earlier published version"}>
          Roll back…
        </button>
        <button type="button" disabled={act.busy} onClick={() => doit(() => api.call("SkillAdmin", d.skill.pinned ? "UnpinSkill" : "PinSkill", { name }))}>
          {d.skill.pinned ? "Unpin" : "Pin"}
        </button>
      </div>
      <fieldset class="toolbar">
        <legend>Enable or disable</legend>
        <label class="field" for="tog-level">
          <span>Scope</span>
          <select id="tog-level" value={level} onChange={(e) => setLevel((e.currentTarget as HTMLSelectElement).value as typeof level)}>
            <option value="user">user</option>
            <option value="project">project</option>
            <option value="session">session</option>
            <option value="thread">thread</option>
          </select>
        </label>
        <label class="field" for="tog-key">
          <span>{level === "user" ? "User (default you)" : level === "project" ? "Project path" : `${level} id`}</span>
          <input id="tog-key" type="text" value={key} onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="button" disabled={act.busy} onClick={() => toggle(true)}>
          Enable
        </button>
        <button type="button" disabled={act.busy} onClick={() => toggle(false)}>
          Disable
        </button>
        <button type="button" disabled={act.busy} onClick={() => toggle(true, true)} title="remove the setting at this scope, so the wider one applies">
          Clear setting
        </button>
      </fieldset>
      {d.toggles.length ? (
        <p>
          Settings:{" "}
          {d.toggles.map((t) => (
            <Badge key={`${t.level}:${t.key}`} kind={t.enabled ? "enabled" : "disabled"}>
              {t.enabled ? "enabled" : "disabled"} for {t.level} {t.key}
            </Badge>
          ))}
        </p>
      ) : (
        <p class="muted">Enabled everywhere (no per-scope setting).</p>
      )}
      <ConfirmDialog
        open={rollingBack}
        title={`Roll ${name} back?`}
        confirmLabel={previous ? `Roll back to v${previous.seq}` : "Roll back"}
        busy={act.busy}
        onCancel={() => setRollingBack(false)}
        onConfirm={async () => {
          await doit(() => api.call("SkillAdmin", "RollbackSkill", { name }));
          setRollingBack(false);
        }}
      >
        <p>
          The published version goes from {published ? `v${published.seq}` : "—"} back to {previous ? `v${previous.seq}` : "the previous one"}. Versions are immutable; you can publish v
          {published?.seq} again later.
        </p>
      </ConfirmDialog>

      <h3>Versions</h3>
      <table>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Author</th>
            <th scope="col">η</th>
            <th scope="col">Trials</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {d.versions
            .slice()
            .reverse()
            .map((v) => (
              <tr key={v.id} data-version={v.seq} class={v.id === published?.id ? "selected" : ""}>
                <td>
                  <VersionBadge v={v} />
                  {v.flags.length ? <Badge kind="fail">{v.flags.join(", ")}</Badge> : null}
                </td>
                <td>{v.author}</td>
                <td>{num(v.eta)}</td>
                <td>
                  {v.passes}/{v.trials}
                </td>
                <td>
                  <When at={v.createdAt} />
                </td>
              </tr>
            ))}
        </tbody>
      </table>
      <VersionDiff name={name} versions={d.versions} published={published} />

      <div class="grid2">
        <div>
          <h3>η over time</h3>
          <LineChart
            label={`η of ${name}`}
            yMin={0}
            yMax={1}
            refY={0.5}
            points={d.etaHistory.map((e) => ({ x: Date.parse(e.at), y: e.eta }))}
            formatX={etaAxis(d.etaHistory.map((e) => Date.parse(e.at)))}
          />
        </div>
        <div>
          <h3>Trials</h3>
          <BarChart label={`Trials of ${name}, oldest first (pass or fail)`} bars={d.trials.slice(-40).map((t) => ({ label: `v${t.seq}`, value: 1, tone: t.passed ? "good" : "bad" }))} />
          <p class="muted">
            {d.trials.filter((t) => t.passed).length} passed, {d.trials.filter((t) => !t.passed).length} failed
            {d.trials.length > 40 ? " (last 40 shown)" : ""}.
          </p>
        </div>
      </div>

      <h3>Evaluation reports</h3>
      {d.reports.length === 0 ? <Empty>No evaluation reports.</Empty> : d.reports.map((rep) => <ReportDetail key={rep.id} report={rep} />)}

      <h3>SKILL.md of {d.selected.seq ? `v${d.selected.seq}` : "the selected version"}</h3>
      <pre class="body" tabIndex={0} aria-label={`SKILL.md body of ${name} v${d.selected.seq}`}>
        {d.selected.body ?? ""}
      </pre>
      {d.grants.length ? <p class="muted">Granted tools: {d.grants.map((g) => g.tool).join(", ")}</p> : null}

      <h3>Audit</h3>
      <AuditList entries={d.audit} />
    </article>
  );
}

function VersionDiff({ name, versions, published }: { name: string; versions: SkillVersion[]; published: SkillVersion | null }) {
  const { api } = useLive();
  const newest = versions[versions.length - 1];
  const [to, setTo] = useState(published ? `v${published.seq}` : newest ? `v${newest.seq}` : "");
  const [from, setFrom] = useState("");
  useEffect(() => {
    // default: the version before `to`
    const toSeq = Number(to.slice(1));
    const before = versions.filter((v) => v.seq < toSeq).pop();
    setFrom(before ? `v${before.seq}` : "");
  }, [name, to]);
  const r = useResource(async () => (from && to ? api.call("SkillAdmin", "DiffVersions", { name, from, to }) : null), [name, from, to]);
  if (versions.length < 2) return null;
  const opts = versions.map((v) => (
    <option key={v.id} value={`v${v.seq}`}>
      v{v.seq} ({v.status})
    </option>
  ));
  return (
    <section aria-labelledby="diff-h">
      <h3 id="diff-h">Diff</h3>
      <div class="toolbar">
        <label class="field" for="diff-from">
          <span>From</span>
          <select id="diff-from" value={from} onChange={(e) => setFrom((e.currentTarget as HTMLSelectElement).value)}>
            {opts}
          </select>
        </label>
        <label class="field" for="diff-to">
          <span>To</span>
          <select id="diff-to" value={to} onChange={(e) => setTo((e.currentTarget as HTMLSelectElement).value)}>
            {opts}
          </select>
        </label>
        <Loading on={r.loading} />
      </div>
      <ErrorNote error={r.error} what="Could not compute the diff" />
      {r.data ? <DiffView diff={r.data.diff} label={`Diff of ${name} from v${r.data.fromSeq} to v${r.data.toSeq}`} /> : null}
    </section>
  );
}

/** Dates on the η axis, or times of day when the history spans less than two days. */
function etaAxis(times: number[]): (x: number) => string {
  const span = times.length ? Math.max(...times) - Math.min(...times) : 0;
  return span < 2 * 86_400_000
    ? (x) => new Date(x).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : (x) => new Date(x).toLocaleDateString(undefined, { month: "short", day: "numeric" });
}
