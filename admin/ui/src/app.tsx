// The shell: top navigation (hash routes), the live-update connection, and the current view.
import { useEffect, useState } from "preact/hooks";
import type { Topic } from "../../api/contract.js";
import type { Api, LiveState } from "./api.js";
import { LiveContext } from "./live.js";
import { MemoriesView } from "./views/memories.js";
import { PendingView } from "./views/pending.js";
import { SkillsView } from "./views/skills.js";
import { LearningView } from "./views/learning.js";
import { AuditView } from "./views/audit.js";

const VIEWS = [
  { id: "memories", title: "Memories", View: MemoriesView },
  { id: "pending", title: "Pending", View: PendingView },
  { id: "skills", title: "Skills", View: SkillsView },
  { id: "learning", title: "Learning", View: LearningView },
  { id: "audit", title: "Audit", View: AuditView },
] as const;
type ViewId = (typeof VIEWS)[number]["id"];

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: "connecting…",
  live: "live updates on",
  reconnecting: "live updates lost, reconnecting…",
  unauthorized: "token refused: open the address serve --ui printed",
};

function routeFromHash(): ViewId {
  const h = location.hash.replace(/^#\/?/, "").split(/[?&/]/)[0] ?? "";
  return (VIEWS.find((v) => v.id === h)?.id ?? "memories") as ViewId;
}

export function App({ api }: { api: Api }) {
  const [route, setRoute] = useState<ViewId>(routeFromHash());
  const [ticks, setTicks] = useState<Partial<Record<Topic, number>>>({});
  const [live, setLive] = useState<LiveState>("connecting");

  useEffect(() => {
    const on = () => setRoute(routeFromHash());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);

  useEffect(
    () =>
      api.events(
        (topics) =>
          setTicks((t) => {
            const n = { ...t };
            for (const topic of topics) n[topic] = (n[topic] ?? 0) + 1;
            return n;
          }),
        setLive,
      ),
    [api],
  );

  const current = VIEWS.find((v) => v.id === route)!;
  useEffect(() => {
    document.title = `${current.title} · infinity-memory`;
  }, [current]);

  return (
    <LiveContext.Provider value={{ api, ticks }}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <h1>infinity-memory</h1>
        <nav aria-label="Views">
          {VIEWS.map((v) => (
            <a key={v.id} href={`#/${v.id}`} aria-current={v.id === route ? "page" : undefined}>
              {v.title}
            </a>
          ))}
        </nav>
        <span class={`live ${live === "live" ? "on" : "off"}`} role="status" aria-live="polite">
          <span class="dot" aria-hidden="true" />
          {LIVE_TEXT[live]}
        </span>
      </header>
      <main id="main" tabIndex={-1} aria-labelledby="view-title">
        <current.View />
      </main>
    </LiveContext.Provider>
  );
}

export function NoToken() {
  return (
    <main id="main">
      <div class="panel">
        <h2 id="view-title">Access token needed</h2>
        <p>
          Open the address that <code>infinity-memory serve --ui</code> printed; it ends in <code>#token=…</code>. The token is also in the token file next to the
          database (readable only by you).
        </p>
      </div>
    </main>
  );
}
