import { useCallback, useEffect, useState, memo } from "react";
import { describeError, toAppError } from "../api/errors";
import type { ConsolidationResult, CoverageReport, MemoryOverview } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { useAppEvents } from "../lib/hub";
import { clockTime, counted, relativeTime } from "../lib/time";
import { useNow } from "../lib/useNow";
import { Markdown } from "./Markdown";

export interface FlushNote {
  path: string;
  bullets: number;
  at: number;
}

const STATUS: Record<ConsolidationResult["status"], string> = {
  written: "MEMORY.md updated",
  unchanged: "MEMORY.md already held everything new",
  nothing_new: "Nothing new to merge",
  rejected: "Rejected: the rewrite would have dropped too much",
  deferred: "Deferred: MEMORY.md was edited meanwhile",
  busy: "Already running elsewhere",
  dry_run: "Dry run",
  failed: "Failed",
};

export const MemoryPanel = memo(function MemoryPanel({ flushes, onOpenFile }: { flushes: FlushNote[]; onOpenFile(path: string): void }) {
  const backend = useBackend();
  const now = useNow(30_000);
  const [overview, setOverview] = useState<MemoryOverview | null>(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ConsolidationResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(() => {
    backend
      .memoryOverview()
      .then(setOverview)
      .catch((e: unknown) => setError(describeError(toAppError(e))));
  }, [backend]);
  useEffect(load, [load]);

  useAppEvents((e) => {
    if (e.type === "consolidated") setResult(e.result);
    if (e.type === "memory_flushed" || e.type === "consolidated" || (e.type === "file_changed" && e.path === overview?.today_path)) load();
  });

  const consolidate = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await backend.consolidateNow());
      load();
    } catch (e) {
      setError(describeError(toAppError(e)));
    } finally {
      setBusy(false);
    }
  };

  const last = overview?.last_consolidation_ms ?? null;
  const next = overview?.next_consolidation_ms ?? null;

  return (
    <div className="memory-panel panel-scroll" data-testid="memory-panel">
      <section>
        <h3>Consolidation</h3>
        <p className="small">
          Last run: {last ? <span title={clockTime(last)}>{relativeTime(last, now)}</span> : "never"}
          {" · "}
          Next: {!overview ? "…" : !overview.consolidation_enabled ? "off" : next ? <span title={clockTime(next)}>{relativeTime(next, now)}</span> : "not planned"}
        </p>
        <button type="button" data-testid="consolidate-now" onClick={() => void consolidate()} disabled={busy} aria-busy={busy}>
          {busy && <span className="spinner" aria-hidden="true" />}
          {busy ? "Consolidating…" : "Consolidate now"}
        </button>
        {result && (
          <div className={`consolidation-result ${result.status}`} role="status">
            <strong>{STATUS[result.status]}</strong>
            {(result.added > 0 || result.removed > 0) && (
              <span className="delta">
                <span className="added">+{result.added}</span> / <span className="removed">−{result.removed}</span> bullets
              </span>
            )}
            {result.message && result.message !== STATUS[result.status] && <div className="small muted">{result.message}</div>}
            {result.backup && (
              <div className="small">
                Backup:{" "}
                <button type="button" className="link-button" onClick={() => onOpenFile(result.backup ?? "")}>
                  {result.backup}
                </button>
              </div>
            )}
          </div>
        )}
        {error && <div className="notice error">{error}</div>}
      </section>
      <section>
        <h3>
          Today{" "}
          {overview && (
            <button type="button" className="link-button small" onClick={() => onOpenFile(overview.today_path)}>
              {overview.today_path}
            </button>
          )}
        </h3>
        {overview?.today_text ? <Markdown text={overview.today_text} className="today-log" /> : <p className="muted small">Nothing saved today yet.</p>}
      </section>
      <Coverage onOpenFile={onOpenFile} />
      <section>
        <h3>Saved from conversations</h3>
        {flushes.length === 0 ? (
          <p className="muted small">After a run, the facts worth keeping are saved to today’s log and listed here.</p>
        ) : (
          <ul className="flush-list">
            {flushes.map((f) => (
              <li key={`${f.at}-${f.path}`}>
                Saved {counted(f.bullets, "note", "notes")} to{" "}
                <button type="button" className="link-button" onClick={() => onOpenFile(f.path)}>
                  {f.path}
                </button>{" "}
                <span className="muted">{relativeTime(f.at, now)}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
});

/** What the index reaches: the counts, and the files it leaves out with why. */
/** Whether a path names a picture file (read by OCR as one page). */
function isPicture(path: string): boolean {
  return /\.(png|jpe?g|webp|tiff?)$/i.test(path);
}

function Coverage({ onOpenFile }: { onOpenFile(path: string): void }) {
  const backend = useBackend();
  const [report, setReport] = useState<CoverageReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    backend
      .indexCoverage()
      .then((r) => {
        setReport(r);
        setError(null);
      })
      .catch((e: unknown) => setError(describeError(toAppError(e))));
  }, [backend]);
  useEffect(load, [load]);
  return (
    <section data-testid="coverage">
      <h3>
        Coverage{" "}
        <button type="button" className="link-button small" onClick={load}>
          refresh
        </button>
      </h3>
      {error && <div className="notice error">{error}</div>}
      {!report ? (
        !error && <p className="muted small">…</p>
      ) : (
        <>
          <p className="small" data-testid="coverage-counts">
            {counted(report.indexed, "file", "files")} indexed ({counted(report.chunks, "chunk", "chunks")}, {report.embedded.toLocaleString("en-US")} with vectors) · {report.skipped.toLocaleString("en-US")} skipped ·{" "}
            {report.failed.toLocaleString("en-US")} failed
            {report.pending > 0 && ` · ${report.pending.toLocaleString("en-US")} waiting`}
          </p>
          {report.unread_scans.map((line) => (
            <p key={line} className="notice small" data-testid="coverage-unread-scans">
              {line}
            </p>
          ))}
          {report.ocr.length > 0 && (
            <ul className="coverage-list small" data-testid="coverage-ocr">
              {report.ocr.map((f) => (
                <li key={f.path} className="indexed">
                  <button type="button" className="link-button mono" onClick={() => onOpenFile(f.path)}>
                    {f.path}
                  </button>{" "}
                  <span className="muted">
                    indexed (OCR)
                    {!isPicture(f.path) && `, ${counted(f.pages, "page", "pages")} read that way`}
                    {f.unread && `; ${f.unread}`}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {report.left_out.length > 0 && (
            <ul className="coverage-list small">
              {report.left_out.map((f) => (
                <li key={f.path} className={f.status}>
                  {f.folder ? (
                    <span className="mono">{f.path}/</span>
                  ) : (
                    <button type="button" className="link-button mono" onClick={() => onOpenFile(f.path)}>
                      {f.path}
                    </button>
                  )}{" "}
                  <span className="muted">
                    {f.status}
                    {f.reason && `: ${f.reason}`}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
