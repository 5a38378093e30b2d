// Small pieces every view uses: inline errors, empty states, labelled selects, dates, badges.
import type { ComponentChildren } from "preact";

export function ErrorNote({ error, what }: { error: Error | null; what?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {what ? `${what}: ` : ""}
      {error.message}
    </p>
  );
}

export function Loading({ on }: { on: boolean }) {
  return on ? (
    <span class="loading" role="status">
      loading…
    </span>
  ) : null;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function Select<T extends string>(props: { label: string; value: T | ""; options: readonly T[]; onChange: (v: T | "") => void; anyLabel?: string; id: string }) {
  return (
    <label class="field" for={props.id}>
      <span>{props.label}</span>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value as T | "")}>
        <option value="">{props.anyLabel ?? "any"}</option>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o.replace(/_/g, " ")}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${kind.replace(/[^a-z0-9_-]/gi, "")}`}>{children}</span>;
}

export function When({ at }: { at: number | string | null | undefined }) {
  if (at === null || at === undefined || at === "") return <span class="muted">—</span>;
  const d = typeof at === "number" ? new Date(at) : new Date(at);
  if (Number.isNaN(d.getTime())) return <span>{String(at)}</span>;
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })}
    </time>
  );
}

export const pct = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? "—" : `${Math.round(x * 100)}%`);
export const num = (x: number | null | undefined, digits = 2) => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(digits));
