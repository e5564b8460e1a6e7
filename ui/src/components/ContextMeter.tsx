import { memo, useCallback, useEffect, useId, useRef, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { ContextUsage, SessionView } from "../api/types";
import { useBackend } from "../lib/backendContext";

function short(tokens: number): string {
  return tokens >= 10_000 ? `${Math.round(tokens / 1000)}k` : tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k` : String(tokens);
}

/** The chat header's context meter: tokens used of the window (read again after every
 * run and when another session opens), and Compact now with an optional focus. */
export const ContextMeter = memo(function ContextMeter({ sessionId, running, onCompacted }: { sessionId: string | null; running: boolean; onCompacted(view: SessionView): void }) {
  const backend = useBackend();
  const id = useId();
  const [usage, setUsage] = useState<ContextUsage | null>(null);
  const [open, setOpen] = useState(false);
  const [focus, setFocus] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);

  const read = useCallback(() => {
    backend
      .contextUsage()
      .then(setUsage)
      .catch(() => setUsage(null));
  }, [backend]);

  useEffect(() => {
    if (!running) read();
  }, [running, sessionId, read]);

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    return () => document.removeEventListener("mousedown", close);
  }, [open]);

  if (!usage || sessionId === null) return null;
  const limit = Math.max(1, usage.window - usage.reserve);
  const share = Math.min(1, usage.used / limit);
  const level = share >= 0.9 ? "high" : share >= 0.7 ? "mid" : "low";

  const compact = async () => {
    setBusy(true);
    setError(null);
    try {
      const view = await backend.compactNow(focus.trim() || null);
      onCompacted(view);
      setOpen(false);
      setFocus("");
      read();
    } catch (e) {
      setError(describeError(toAppError(e)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="context-meter" ref={box}>
      <button
        type="button"
        className={`meter-button ${level}`}
        data-testid="context-meter"
        aria-expanded={open}
        title={`About ${usage.used.toLocaleString()} tokens of ${usage.window.toLocaleString()} (counted by ${usage.counted_by}); compaction starts at ${limit.toLocaleString()}`}
        onClick={() => setOpen(!open)}
      >
        <span className="meter-bar" aria-hidden="true">
          <span style={{ width: `${Math.round(share * 100)}%` }} />
        </span>
        {short(usage.used)} / {short(usage.window)}
        {usage.compacting && (
          <span className="muted" data-testid="meter-compacting">
            {" "}
            compacting…
          </span>
        )}
      </button>
      {open && (
        <form
          className="meter-panel"
          onSubmit={(e) => {
            e.preventDefault();
            void compact();
          }}
        >
          <p className="small">
            The conversation takes about {Math.round(share * 100)}% of the room before it is compacted, by {usage.counted_by}. Compacting summarises the older part and keeps the recent messages as they are.
          </p>
          <label htmlFor={`${id}-focus`}>Focus of the summary (optional)</label>
          <input id={`${id}-focus`} value={focus} placeholder="e.g. the decisions about the garden" onChange={(e) => setFocus(e.target.value)} />
          {error && (
            <div className="notice error" role="alert">
              {error}
            </div>
          )}
          <div className="row end">
            <button type="submit" className="primary" disabled={busy || running}>
              {busy ? "Compacting…" : "Compact now"}
            </button>
          </div>
        </form>
      )}
    </div>
  );
});
