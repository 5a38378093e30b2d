// Learning overview: how much experience the loop has, how it was rewarded, which policies it
// found, and how far candidate skills got (the funnel).
import { useState } from "preact/hooks";
import { BarChart, Funnel } from "../components/charts.js";
import { Empty, ErrorNote, Loading, When, num } from "../components/common.js";
import { useResource } from "../components/resource.js";
import { useLive, useTick } from "../live.js";

export function LearningView() {
  const { api } = useLive();
  const tick = useTick("learning", "skills", "candidates");
  const [days, setDays] = useState(30);
  const r = useResource(() => api.call("MemoryAdmin", "LearningStats", { days }), [days, tick]);
  const s = r.data;
  return (
    <>
      <h2 id="view-title">Learning overview</h2>
      <div class="toolbar">
        <label class="field" for="learn-days">
          <span>Period</span>
          <select id="learn-days" value={String(days)} onChange={(e) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}>
            <option value="7">last 7 days</option>
            <option value="30">last 30 days</option>
            <option value="90">last 90 days</option>
          </select>
        </label>
        <Loading on={r.loading} />
      </div>
      <ErrorNote error={r.error} what="Could not load learning statistics" />
      {s ? (
        <>
          <div class="grid3">
            <section class="panel" aria-labelledby="ep-h">
              <h3 id="ep-h">Episodes</h3>
              <div class="stat">{s.episodes.total}</div>
              <div class="stat-label">
                {s.episodes.done} done · {s.episodes.open} open · {s.episodes.interrupted} interrupted · {s.episodes.withReward} rewarded · {s.episodes.grounded} grounded ·{" "}
                {s.episodes.suppressed} suppressed
              </div>
              <BarChart label={`Episodes per day, last ${days} days`} bars={s.episodes.perDay.map((d) => ({ label: d.day.slice(5), value: d.count }))} />
              <p class="muted">Queue: {s.queueDepth} thread(s) waiting to be read.</p>
            </section>
            <section class="panel" aria-labelledby="rw-h">
              <h3 id="rw-h">Reward distribution</h3>
              <div class="stat">{num(s.rewards.mean)}</div>
              <div class="stat-label">mean of {s.rewards.count} rewarded episodes (−1 … 1)</div>
              <BarChart
                label="Episode rewards in ten bins from −1 to 1"
                bars={s.rewards.bins.map((b) => ({ label: b.lo.toFixed(1), value: b.count, tone: b.hi <= 0 ? "bad" : b.lo >= 0 ? "good" : "neutral" }))}
              />
              <h3>Signals</h3>
              {s.signals.length === 0 ? (
                <Empty>No reward signals yet.</Empty>
              ) : (
                <ul class="list">
                  {s.signals.map((g) => (
                    <li key={g.kind}>
                      {g.kind.replace(/_/g, " ")}: {g.count}
                    </li>
                  ))}
                </ul>
              )}
            </section>
            <section class="panel" aria-labelledby="fn-h">
              <h3 id="fn-h">Skill funnel</h3>
              <Funnel
                label="Skill funnel"
                stages={[
                  { label: "proposed", value: s.funnel.proposed },
                  { label: "evaluated", value: s.funnel.evaluated },
                  { label: "passed gate", value: s.funnel.passedGate, tone: "good" },
                  { label: "awaiting you", value: s.funnel.pendingRequests },
                  { label: "approved", value: s.funnel.approved, tone: "good" },
                  { label: "rejected", value: s.funnel.rejected, tone: "bad" },
                  { label: "probationary", value: s.funnel.probationary },
                  { label: "active", value: s.funnel.active, tone: "good" },
                  { label: "retired", value: s.funnel.retired, tone: "bad" },
                ]}
              />
              <h3>Memory candidates</h3>
              <p>
                {s.memoryCandidates.created} created · {s.memoryCandidates.merged} merged · {s.memoryCandidates.withdrawn} withdrawn
              </p>
            </section>
          </div>
          <section class="panel" aria-labelledby="pol-h">
            <h3 id="pol-h">Policies</h3>
            {s.policies.length === 0 ? (
              <Empty>No recurring successful pattern found yet.</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Pattern</th>
                    <th scope="col">Tools</th>
                    <th scope="col">Support</th>
                    <th scope="col">Mean value</th>
                    <th scope="col">Gain</th>
                    <th scope="col">Skill</th>
                  </tr>
                </thead>
                <tbody>
                  {s.policies.map((p) => (
                    <tr key={p.id}>
                      <td>{p.keyTerms.join(", ") || p.signature}</td>
                      <td>{p.tools.join(" → ")}</td>
                      <td>{p.support}</td>
                      <td>{num(p.meanValue)}</td>
                      <td>{num(p.gain)}</td>
                      <td>{p.skillName ?? (p.eligible ? "eligible" : "—")}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section class="panel" aria-labelledby="ev-h">
            <h3 id="ev-h">Recent learning events</h3>
            {s.recentEvents.length === 0 ? (
              <Empty>No events yet.</Empty>
            ) : (
              <ol class="timeline">
                {s.recentEvents.map((e) => (
                  <li key={e.id}>
                    <When at={e.at} />
                    <strong>{e.kind.replace(/_/g, " ")}</strong>
                    <span class="muted">
                      {e.threadId ? `thread ${e.threadId} ` : ""}
                      {Object.keys(e.detail).length ? JSON.stringify(e.detail).slice(0, 200) : ""}
                    </span>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      ) : null}
    </>
  );
}
