import { useEffect, useId, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { Trashed } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { Modal } from "./Modal";

/** Asks for a workspace path (a new file or folder, or where to move one) and runs `submit`
 * with it; its error stays in the dialog so the name can be fixed. */
export function PathPrompt({
  title,
  label,
  initial,
  action,
  submit,
  onClose,
}: {
  title: string;
  label: string;
  initial: string;
  action: string;
  submit(path: string): Promise<void>;
  onClose(): void;
}) {
  const id = useId();
  const [path, setPath] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const go = async () => {
    const clean = path.trim().replace(/^\/+|\/+$/g, "");
    if (!clean) {
      setError("Type a name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await submit(clean);
      onClose();
    } catch (e) {
      setError(describeError(toAppError(e)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal label={title} className="path-prompt" testId="path-prompt" onClose={onClose}>
      <form
        className="modal-body"
        onSubmit={(e) => {
          e.preventDefault();
          void go();
        }}
      >
        <h2>{title}</h2>
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          autoFocus
          value={path}
          spellCheck={false}
          onChange={(e) => setPath(e.target.value)}
          onFocus={(e) => {
            // Select the name, not the folders above it or the extension.
            const start = path.lastIndexOf("/") + 1;
            const dot = path.lastIndexOf(".");
            e.target.setSelectionRange(start, dot > start ? dot : path.length);
          }}
        />
        {error && (
          <div className="notice error" role="alert">
            {error}
          </div>
        )}
        <div className="row end">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {action}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** What the trash holds, each with Restore. */
export function TrashDialog({ onClose, onRestored }: { onClose(): void; onRestored(item: Trashed): void }) {
  const backend = useBackend();
  const [items, setItems] = useState<Trashed[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    backend
      .listTrash()
      .then(setItems)
      .catch((e: unknown) => setError(describeError(toAppError(e))));
  }, [backend]);

  const restore = async (item: Trashed) => {
    setError(null);
    try {
      await backend.restoreTrash(item.id);
      setItems((list) => (list ?? []).filter((i) => i.id !== item.id));
      onRestored(item);
    } catch (e) {
      setError(describeError(toAppError(e)));
    }
  };

  return (
    <Modal label="Trash" className="trash-dialog" testId="trash-dialog" onClose={onClose}>
      <header className="modal-head">
        <h2>Trash</h2>
        <button type="button" className="icon-button" aria-label="Close the trash" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="modal-body">
        <p className="muted small">Files and folders deleted here are kept in .cairn/trash/ in the workspace until you remove them there.</p>
        {error && (
          <div className="notice error" role="alert">
            {error}
          </div>
        )}
        {items === null && !error && <p className="muted">Loading…</p>}
        {items?.length === 0 && <p className="muted">The trash is empty.</p>}
        {items && items.length > 0 && (
          <ul className="trash-list">
            {items.map((item) => (
              <li key={item.id} data-testid="trash-item">
                <span className="trash-path" title={item.path}>
                  {item.path}
                  {item.dir ? "/" : ""}
                </span>
                <span className="muted small">{new Date(item.deleted_at).toLocaleString()}</span>
                <button type="button" onClick={() => void restore(item)} aria-label={`Restore ${item.path}`}>
                  Restore
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </Modal>
  );
}
