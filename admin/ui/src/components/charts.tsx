// Tiny inline-SVG charts (no chart library): a line for η over time, bars for histograms and a
// horizontal funnel. Each carries a text summary for screen readers.

export interface Point {
  x: number;
  y: number;
}

const W = 320;
const H = 120;
const PAD = { l: 34, r: 8, t: 8, b: 20 };

export function LineChart(props: { points: Point[]; label: string; yMin?: number; yMax?: number; formatX?: (x: number) => string; refY?: number }) {
  const pts = props.points;
  if (pts.length === 0) return <p class="empty">No data yet for {props.label}.</p>;
  const xs = pts.map((p) => p.x);
  const ys = pts.map((p) => p.y);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y0 = props.yMin ?? Math.min(...ys);
  const y1 = props.yMax ?? Math.max(...ys);
  const sx = (x: number) => PAD.l + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y: number) => H - PAD.b - (y1 === y0 ? 0.5 : (y - y0) / (y1 - y0)) * (H - PAD.t - PAD.b);
  const d = pts.map((p, i) => `${i ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
  const last = pts[pts.length - 1]!;
  const fx = props.formatX ?? ((x: number) => String(x));
  const summary = `${props.label}: ${pts.length} points, from ${ys[0]!.toFixed(2)} to ${last.y.toFixed(2)}`;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      <line class="axis" x1={PAD.l} y1={H - PAD.b} x2={W - PAD.r} y2={H - PAD.b} />
      <line class="axis" x1={PAD.l} y1={PAD.t} x2={PAD.l} y2={H - PAD.b} />
      <text class="tick" x={PAD.l - 4} y={sy(y1) + 4} text-anchor="end">
        {y1.toFixed(2)}
      </text>
      <text class="tick" x={PAD.l - 4} y={sy(y0) + 4} text-anchor="end">
        {y0.toFixed(2)}
      </text>
      <text class="tick" x={PAD.l} y={H - 4}>
        {fx(x0)}
      </text>
      <text class="tick" x={W - PAD.r} y={H - 4} text-anchor="end">
        {fx(x1)}
      </text>
      {props.refY !== undefined && props.refY >= y0 && props.refY <= y1 ? <line class="ref" x1={PAD.l} x2={W - PAD.r} y1={sy(props.refY)} y2={sy(props.refY)} /> : null}
      <path class="line" d={d} fill="none" />
      {pts.map((p, i) => (
        <circle key={i} class="dot" cx={sx(p.x)} cy={sy(p.y)} r={2.5} />
      ))}
    </svg>
  );
}

export interface Bar {
  label: string;
  value: number;
  tone?: "good" | "bad" | "neutral";
}

export function BarChart(props: { bars: Bar[]; label: string }) {
  const bars = props.bars;
  if (bars.length === 0) return <p class="empty">No data yet for {props.label}.</p>;
  const max = Math.max(1, ...bars.map((b) => b.value));
  // bars stay narrow when there are few of them
  const bw = Math.min(28, (W - PAD.l - PAD.r) / bars.length);
  const summary = `${props.label}: ${bars.map((b) => `${b.label} ${b.value}`).join(", ")}`;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      <line class="axis" x1={PAD.l} y1={H - PAD.b} x2={W - PAD.r} y2={H - PAD.b} />
      <text class="tick" x={PAD.l - 4} y={PAD.t + 8} text-anchor="end">
        {max}
      </text>
      {bars.map((b, i) => {
        const h = (b.value / max) * (H - PAD.t - PAD.b);
        const x = PAD.l + i * bw;
        return (
          <g key={i}>
            <rect class={`bar ${b.tone ?? "neutral"}`} x={x + 1} y={H - PAD.b - h} width={Math.max(1, bw - 2)} height={h} />
            {bars.length <= 12 ? (
              <text class="tick" x={x + bw / 2} y={H - 6} text-anchor="middle">
                {b.label}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}

/** Stages of a pipeline as horizontal bars, each labelled with its count. */
export function Funnel(props: { stages: Bar[]; label: string }) {
  const max = Math.max(1, ...props.stages.map((s) => s.value));
  const rowH = 22;
  const h = props.stages.length * rowH + 4;
  const labelW = 110;
  const summary = `${props.label}: ${props.stages.map((s) => `${s.label} ${s.value}`).join(", ")}`;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${h}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      {props.stages.map((s, i) => {
        const w = (s.value / max) * (W - labelW - 40);
        const y = 2 + i * rowH;
        return (
          <g key={s.label}>
            <text class="tick" x={labelW - 6} y={y + 15} text-anchor="end">
              {s.label}
            </text>
            <rect class={`bar ${s.tone ?? "neutral"}`} x={labelW} y={y + 3} width={Math.max(1, w)} height={rowH - 6} />
            <text class="tick" x={labelW + w + 4} y={y + 15}>
              {s.value}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
