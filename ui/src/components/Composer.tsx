import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useAppEvents } from "../lib/hub";
import { Icon } from "./Icon";

/** The message box: Enter sends (or steers a running run), Alt+Enter queues a follow-up
 * while a run works (the core sends it where the run would end, and the run goes on),
 * Shift+Enter adds a line, Esc stops. */
export function Composer({
  running,
  disabled,
  focusKey,
  onSend,
  onSteer,
  onStop,
  queued,
  returned,
  onQueue,
  onDrop,
}: {
  running: boolean;
  disabled: boolean;
  /** Changing it moves the focus here (a session was opened). */
  focusKey: string | null;
  onSend(text: string): void;
  onSteer(text: string): void;
  onStop(): void;
  /** The follow-ups the core holds, oldest first. */
  queued: string[];
  /** Follow-ups given back undelivered: put back in the box. */
  returned: { texts: string[]; seq: number } | null;
  onQueue(text: string): void;
  onDrop(index: number): void;
}) {
  const [text, setText] = useState("");
  const ref = useRef<HTMLTextAreaElement>(null);
  const [dragging, setDragging] = useState(false);
  // Files dropped onto the window are in the workspace now: the message refers to them.
  useAppEvents((e) => {
    if (e.type === "drag_over") setDragging(e.active);
    if (e.type !== "files_dropped" || e.added.length === 0) return;
    setDragging(false);
    const refs = e.added.map((p) => `Attached: \`${p}\``).join("\n");
    setText((t) => (t.trim() ? `${t.replace(/\s+$/, "")}\n${refs}\n` : `${refs}\n`));
    ref.current?.focus();
  });
  // Follow-ups the core gave back undelivered (the run was stopped or failed) return to
  // the message box, so nothing typed is lost.
  const lastReturn = useRef(returned?.seq ?? 0);
  useEffect(() => {
    if (!returned || returned.seq === lastReturn.current) return;
    lastReturn.current = returned.seq;
    const back = returned.texts.join("\n\n");
    setText((t) => (t.trim() ? `${back}\n\n${t}` : back));
  }, [returned]);

  useEffect(() => {
    // Never take the focus from another field (renaming a session, the editor ...).
    const active = document.activeElement as HTMLElement | null;
    const typing = active && active !== ref.current && (/^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName) || active.isContentEditable);
    if (!typing) ref.current?.focus();
  }, [focusKey]);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [text]);

  const submit = () => {
    const value = text.trim();
    if (!value || disabled) return;
    if (running) onSteer(value);
    else onSend(value);
    setText("");
  };

  const queue = () => {
    const value = text.trim();
    if (!value || disabled || !running) return;
    onQueue(value);
    setText("");
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      if (e.altKey) queue();
      else submit();
    }
  };

  return (
    <div className={dragging ? "composer-wrap dragging" : "composer-wrap"}>
      {dragging && (
        <div className="drop-hint" data-testid="drop-hint">
          Drop notes or documents (PDF, DOCX, ODT, EPUB, HTML) to add them to <code>knowledge/inbox/</code> and refer to them in your message
        </div>
      )}
      {queued.length > 0 && (
        <ul className="queued" aria-label="Queued follow-ups" data-testid="queued">
          {queued.map((q, i) => (
            <li key={`${i}-${q}`} className="queued-item">
              <span className="queued-label">{i === 0 ? "Next" : "Queued"}</span>
              <span className="queued-text" title={q}>
                {q}
              </span>
              <button type="button" className="icon-button small" aria-label={`Drop the follow-up: ${q}`} onClick={() => onDrop(i)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    <div className="composer">
      <textarea
        ref={ref}
        data-testid="composer"
        aria-label={running ? "Steer the run" : "Message"}
        placeholder={running ? "Steer: add a message to the running answer…" : "Message Cairn…"}
        rows={1}
        value={text}
        disabled={disabled}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
      />
      <div className="composer-buttons">
        {running && (
          <button
            type="button"
            className="stop"
            data-testid="stop-button"
            onClick={onStop}
            title="Stop (Esc)"
          >
            <Icon name="stop" size={14} /> Stop
          </button>
        )}
        {running && (
          <button type="button" data-testid="queue-button" onClick={queue} disabled={disabled || !text.trim()} title="Send when this run ends (Alt+Enter)">
            Queue
          </button>
        )}
        <button type="button" className="primary" data-testid="send-button" onClick={submit} disabled={disabled || !text.trim()} title={running ? "Send to the running answer (Enter)" : "Send (Enter)"}>
          {running ? "Steer" : "Send"}
          <Icon name="send" size={14} />
        </button>
      </div>
    </div>
    </div>
  );
}
