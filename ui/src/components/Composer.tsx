import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { Icon } from "./Icon";

/** The message box: Enter sends (or steers a running run), Shift+Enter adds a line, Esc stops. */
export function Composer({
  running,
  disabled,
  focusKey,
  onSend,
  onSteer,
  onStop,
}: {
  running: boolean;
  disabled: boolean;
  /** Changing it moves the focus here (a session was opened). */
  focusKey: string | null;
  onSend(text: string): void;
  onSteer(text: string): void;
  onStop(): void;
}) {
  const [text, setText] = useState("");
  const ref = useRef<HTMLTextAreaElement>(null);

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

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  return (
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
          <button type="button" className="stop" data-testid="stop-button" onClick={onStop} title="Stop (Esc)">
            <Icon name="stop" size={14} /> Stop
          </button>
        )}
        <button type="button" className="primary" data-testid="send-button" onClick={submit} disabled={disabled || !text.trim()} title={running ? "Send to the running answer (Enter)" : "Send (Enter)"}>
          {running ? "Steer" : "Send"}
          <Icon name="send" size={14} />
        </button>
      </div>
    </div>
  );
}
