import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { describeError, toAppError } from "../api/errors";
import type { IndexStatus, SearchHit, SearchResults } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { counted, duration } from "../lib/time";
import { IndexStatusText } from "./IndexStatusText";
import { Modal } from "./Modal";

let lastQuery = "";

/** Ctrl+K: memory search with keyboard selection; a hit opens the file at its lines. */
export function SearchPanel({ status, onClose, onOpenHit }: { status: IndexStatus | null; onClose(): void; onOpenHit(hit: SearchHit): void }) {
  const backend = useBackend();
  const [query, setQuery] = useState(lastQuery);
  const [results, setResults] = useState<SearchResults | null>(null);
  const [selected, setSelected] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => {
    lastQuery = query;
    const q = query.trim();
    const id = (seq.current += 1);
    if (!q) {
      setResults(null);
      return;
    }
    const timer = window.setTimeout(() => {
      backend
        .memorySearch(q, 20)
        .then((r) => {
          if (id !== seq.current) return;
          setResults(r);
          setSelected(0);
          setError(null);
        })
        .catch((e: unknown) => id === seq.current && setError(describeError(toAppError(e))));
    }, 120);
    return () => window.clearTimeout(timer);
  }, [query, backend]);

  useEffect(() => {
    list.current?.querySelector('[aria-selected="true"]')?.scrollIntoView?.({ block: "nearest" });
  }, [selected]);

  const hits = results?.hits ?? [];
  const open = (hit: SearchHit | undefined) => {
    if (!hit) return;
    onOpenHit(hit);
    onClose();
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setSelected((s) => Math.min(s + 1, hits.length - 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setSelected((s) => Math.max(s - 1, 0));
    } else if (e.key === "Enter") {
      e.preventDefault();
      open(hits[selected]);
    }
  };

  return (
    <Modal label="Search memory" className="search-panel" testId="search-panel" onClose={onClose}>
      <input
        className="search-input"
        data-testid="search-box"
        type="search"
        role="combobox"
        aria-expanded={hits.length > 0}
        aria-controls="search-results"
        aria-activedescendant={hits.length ? `hit-${selected}` : undefined}
        aria-label="Search memory"
        placeholder="Search memory, notes and past sessions…"
        autoFocus
        onFocus={(e) => e.currentTarget.select()}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={onKey}
      />
      <div className="search-status small muted">
        <IndexStatusText status={status} />
        {results && (
          <span>
            {" "}
            · {counted(hits.length, "result", "results")} in {duration(results.took_ms)}{results.stale && " (index still catching up)"}
            {meaningNote(results)}
          </span>
        )}
      </div>
      {error && <div className="notice error">{error}</div>}
      <ul className="search-results" id="search-results" role="listbox" ref={list} aria-label="Results">
        {hits.map((h, i) => (
          <li
            key={`${h.path}:${h.start_line}`}
            id={`hit-${i}`}
            role="option"
            aria-selected={i === selected}
            className={i === selected ? "search-hit selected" : "search-hit"}
            data-testid="search-hit"
            data-path={h.path}
            data-start-line={h.start_line}
            onMouseMove={() => setSelected(i)}
            onClick={() => open(h)}
          >
            <div className="hit-head">
              <span className="hit-path">{h.path}</span>
              {h.heading && <span className="hit-heading">{h.heading}</span>}
              {h.day && !h.heading.includes(h.day) && <span className="hit-day">{h.day}</span>}
              <span className="hit-lines" title={h.folder ? `In ${h.folder}, searched in place` : undefined}>
                {h.page !== null ? (
                  `p. ${h.page}`
                ) : (
                  <>
                    L{h.start_line}
                    {h.end_line > h.start_line && `–${h.end_line}`}
                  </>
                )}
              </span>
            </div>
            <div className="hit-snippet">{h.parts.map((p, k) => (p.hit ? <mark key={k}>{p.text}</mark> : <span key={k}>{p.text}</span>))}</div>
          </li>
        ))}
        {results && hits.length === 0 && <li className="muted small empty">Nothing found for “{query.trim()}”.</li>}
      </ul>
      <div className="search-help small muted">
        <kbd>↑</kbd> <kbd>↓</kbd> choose · <kbd>Enter</kbd> open · <kbd>Esc</kbd> close
      </div>
    </Modal>
  );
}

/** How the hits were found, when meaning took part: "by words and meaning", and how much of
 * the index had its vectors when that was not all of it. */
export function meaningNote(results: SearchResults): string {
  if (results.mode !== "hybrid" && results.mode !== "semantic") return "";
  const how = results.mode === "hybrid" ? " · by words and meaning" : " · by meaning";
  const c = results.coverage;
  if (!c || c.embedded >= c.chunks) return how;
  return `${how} (meaning covers ${c.embedded.toLocaleString("en-US")} of ${c.chunks.toLocaleString("en-US")} chunks so far)`;
}
