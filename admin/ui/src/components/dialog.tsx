// A confirm step for changes that lose something (forget, reject, rollback). The native <dialog>
// opened with showModal() traps focus and closes on Escape; the safe choice has initial focus, so
// Enter without looking does nothing harmful. Enter on the confirm button confirms.
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      d.showModal();
      cancelRef.current?.focus();
    } else if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault(); // Escape: let the owner close it so state stays in one place
        props.onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!props.busy) props.onConfirm();
        }}
      >
        <h2 id={titleId}>{props.title}</h2>
        <div class="dialog-body">{props.children}</div>
        <div class="actions">
          <button type="button" ref={cancelRef} onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class={props.danger ? "danger" : "primary"} disabled={props.busy}>
            {props.busy ? "Working…" : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
