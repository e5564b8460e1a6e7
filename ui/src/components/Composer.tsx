import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useAppEvents } from "../lib/hub";
import { Icon } from "./Icon";

/** The message box: Enter sends (or steers a running run), Alt+Enter queues a follow-up
 * while a run works (sent when it ends), Shift+Enter adds a line, Esc stops. */
export function Composer({
  running,
  disabled,
  focusKey,
  onSend,
  onSteer,
  onStop,
  ended,
}: {
  running: boolean;
  disabled: boolean;
  /** Changing it moves the focus here (a session was opened). */
  focusKey: string | null;
  onSend(text: string): void;
  onSteer(text: string): void;
  onStop(): void;
  /** How the last run ended (null while none has, or while one runs). */
  ended: string | null;
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
  // Follow-ups typed while a run works: the first goes when the run ends. Stopping the
  // run holds them until the user sends or drops them.
  const [queued, setQueued] = useState<string[]>([]);
  const [held, setHeld] = useState(false);
  const wasRunning = useRef(running);
  const awaiting = useRef(false);

  useEffect(() => {
    if (wasRunning.current && !running) awaiting.current = true;
    wasRunning.current = running;
    if (running || !awaiting.current || ended === null) return;
    awaiting.current = false;
    if (queued.length === 0) return;
    // Only a run that completed goes on by itself: after a stop, a failure or a block
    // the follow-ups wait for the user.
    if (ended !== "completed" || held || disabled) {
      setHeld(true);
      return;
    }
    const [next, ...rest] = queued;
    if (next === undefined) return;
    setQueued(rest);
    onSend(next);
  }, [running, ended, held, disabled, queued, onSend]);

  // Once every held follow-up is sent or dropped, the next ones go on by themselves again.
  useEffect(() => {
    if (queued.length === 0) setHeld(false);
  }, [queued.length]);

  // A new session starts with an empty queue.
  useEffect(() => {
    setQueued([]);
    setHeld(false);
  }, [focusKey]);

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
    setQueued((q) => [...q, value]);
    setText("");
  };

  const sendHeld = (index: number) => {
    const value = queued[index];
    if (value === undefined || running) return;
    setQueued((q) => q.filter((_, i) => i !== index));
    setHeld(false);
    onSend(value);
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
              <span className="queued-label">{held ? "Held" : i === 0 ? "Next" : "Queued"}</span>
              <span className="queued-text" title={q}>
                {q}
              </span>
              {held && !running && (
                <button type="button" className="small-button" onClick={() => sendHeld(i)}>
                  Send now
                </button>
              )}
              <button type="button" className="icon-button small" aria-label={`Drop the follow-up: ${q}`} onClick={() => setQueued((list) => list.filter((_, k) => k !== i))}>
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
