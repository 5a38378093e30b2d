// A unified diff as the server produced it, coloured per line and with +/- kept as text (so the
// meaning survives without colour and in copy-paste).

export function DiffView({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, "").split("\n");
  if (diff.trim() === "") return <p class="empty">No differences.</p>;
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      {lines.map((l, i) => {
        const cls = l.startsWith("+++") || l.startsWith("---") ? "file" : l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx";
        return (
          <span key={i} class={`dl ${cls}`}>
            {l}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}
