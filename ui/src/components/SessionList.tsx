import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { SessionHit, SessionSummary } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { relativeTime } from "../lib/time";
import { useNow } from "../lib/useNow";
import { Icon } from "./Icon";

export interface SessionListProps {
  sessions: SessionSummary[];
  currentId: string | null;
  branches: number;
  onOpen(id: string): void;
  onNew(): void;
  onRename(id: string, title: string): void;
  onDelete(id: string): void;
  onExport(id: string): void;
  onImport(): void;
}

function SessionRow({
  s,
  active,
  branches,
  now,
  props,
  snippet,
}: {
  s: SessionSummary;
  active: boolean;
  branches: number;
  now: number;
  props: SessionListProps;
  /** Where the session's text matches the filter. */
  snippet?: string;
}) {
  const [mode, setMode] = useState<"view" | "menu" | "rename" | "confirm">("view");
  const [draft, setDraft] = useState(s.title ?? "");
  const rowRef = useRef<HTMLLIElement>(null);
  const title = s.title?.trim() || "Untitled";

  useEffect(() => {
    if (mode !== "menu") return;
    const close = (e: MouseEvent) => {
      if (!rowRef.current?.contains(e.target as Node)) setMode("view");
    };
    document.addEventListener("mousedown", close);
    return () => document.removeEventListener("mousedown", close);
  }, [mode]);

  /** Closes the menu, then does `act`. */
  const closing = (act: () => void) => () => {
    setMode("view");
    act();
  };
  const rename = () => {
    setDraft(s.title ?? "");
    setMode("rename");
  };
  const commit = () => {
    const t = draft.trim();
    setMode("view");
    if (t && t !== (s.title ?? "")) props.onRename(s.id, t);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "Enter") {
      e.preventDefault();
      commit();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      setMode("view");
    }
  };

  return (
    <li ref={rowRef} className={active ? "session-item active" : "session-item"} data-testid="session-item" data-id={s.id}>
      {mode === "rename" ? (
        <input className="rename-input" aria-label="Session title" value={draft} autoFocus onFocus={(e) => e.currentTarget.select()} onChange={(e) => setDraft(e.target.value)} onKeyDown={onKey} onBlur={commit} />
      ) : (
        <button type="button" className="session-open" aria-current={active ? "true" : undefined} onClick={() => props.onOpen(s.id)} onDoubleClick={rename} title={title}>
          <span className="session-title">{title}</span>
          {snippet && (
            <span className="session-snippet" data-testid="session-snippet">
              {snippet}
            </span>
          )}
          <span className="session-meta">
            {relativeTime(s.updated_ms, now)}
            {active && branches > 1 && (
              <span className="badge" title={`${branches} branches`}>
                {branches} branches
              </span>
            )}
          </span>
        </button>
      )}
      {mode !== "rename" && (
        <div className="session-menu">
          <button type="button" className="icon-button small" aria-label={`Actions for ${title}`} aria-haspopup="menu" aria-expanded={mode === "menu"} onClick={() => setMode(mode === "menu" ? "view" : "menu")}>
            <Icon name="more" size={14} />
          </button>
        </div>
      )}
      {mode === "menu" && (
        <div className="menu" role="menu" onKeyDown={(e) => e.key === "Escape" && (e.stopPropagation(), setMode("view"))}>
          <button type="button" role="menuitem" autoFocus onClick={rename}>
            Rename
          </button>
          <button type="button" role="menuitem" onClick={closing(() => props.onExport(s.id))}>
            Export as Markdown…
          </button>
          <button type="button" role="menuitem" className="danger" onClick={() => setMode("confirm")}>
            Delete…
          </button>
        </div>
      )}
      {mode === "confirm" && (
        <div className="confirm" role="alertdialog" aria-label="Delete session">
          <span>Delete “{title}”? This cannot be undone.</span>
          <div className="row end">
            <button type="button" autoFocus onClick={() => setMode("view")}>
              Cancel
            </button>
            <button type="button" className="danger" onClick={closing(() => props.onDelete(s.id))}>
              Delete
            </button>
          </div>
        </div>
      )}
    </li>
  );
}

export function SessionList(props: SessionListProps) {
  const backend = useBackend();
  const [filter, setFilter] = useState("");
  // Sessions whose text matches the filter (the index's sessions corpus), with a snippet.
  const [found, setFound] = useState<{ query: string; hits: SessionHit[] } | null>(null);
  const now = useNow();
  const q = filter.trim().toLowerCase();

  useEffect(() => {
    if (q.length < 2) return;
    let live = true;
    const timer = window.setTimeout(() => {
      backend
        .searchSessions(q)
        .then((hits) => live && setFound({ query: q, hits }))
        .catch(() => live && setFound({ query: q, hits: [] }));
    }, 200);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [backend, q]);

  const byTitle = q ? props.sessions.filter((s) => (s.title ?? "untitled").toLowerCase().includes(q)) : props.sessions;
  const snippets = new Map((found && found.query === q ? found.hits : []).map((h) => [h.id, h.snippet]));
  const byText = q ? props.sessions.filter((s) => snippets.has(s.id) && !byTitle.includes(s)) : [];
  const shown = [...byTitle, ...byText];

  return (
    <div className="sessions">
      <div className="sidebar-head">
        <h2>Sessions</h2>
        <div className="row">
          <button type="button" className="icon-button small" aria-label="Import conversations from ChatGPT or Claude" title="Import conversations (a ChatGPT or Claude export)" onClick={props.onImport}>
            <Icon name="download" size={14} />
          </button>
          <button type="button" className="new-session" data-testid="new-session" onClick={props.onNew} title="New session (Ctrl+N)">
            <Icon name="plus" size={14} /> New
          </button>
        </div>
      </div>
      <input className="filter" type="search" aria-label="Find sessions by title or text" placeholder="Find sessions" value={filter} onChange={(e) => setFilter(e.target.value)} />
      <ul className="session-list">
        {shown.map((s) => (
          <SessionRow key={s.id} s={s} active={s.id === props.currentId} branches={props.branches} now={now} props={props} snippet={q ? snippets.get(s.id) : undefined} />
        ))}
        {shown.length === 0 && <li className="muted small empty">{q ? "No session matches." : "No sessions yet."}</li>}
      </ul>
    </div>
  );
}
