import { useEffect, useRef, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { DocumentText } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { Markdown } from "./Markdown";

export interface DocumentRequest {
  path: string;
  /** The page to show (1-based), from a search hit. */
  page?: number;
  nonce: number;
}

/**
 * A document's text as the index reads it, every page under its number, scrolled to the
 * page asked for; the original opens in the system's viewer.
 */
export function DocumentView({ request }: { request: DocumentRequest }) {
  const backend = useBackend();
  const [doc, setDoc] = useState<DocumentText | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const pages = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    if (doc?.path !== request.path) setDoc(null);
    backend
      .readDocument(request.path)
      .then((d) => live && setDoc(d))
      .catch((e: unknown) => live && setError(describeError(toAppError(e))));
    return () => {
      live = false;
    };
    // Read again for each request (a hit, a click); `doc` only decides what shows meanwhile.
  }, [backend, request]); // eslint-disable-line react-hooks/exhaustive-deps

  // Scroll to the page asked for once the text is there.
  useEffect(() => {
    if (!doc || doc.path !== request.path) return;
    const target = request.page ? pages.current?.querySelector<HTMLElement>(`[data-page="${request.page}"]`) : null;
    if (target) target.scrollIntoView({ block: "start" });
    else if (pages.current) pages.current.scrollTop = 0;
  }, [doc, request]);

  const view = () => {
    setFailed(null);
    backend.openInViewer(request.path).catch((e: unknown) => setFailed(describeError(toAppError(e))));
  };

  const paged = doc?.pages.some((p) => p.number !== null) ?? false;
  return (
    <div className="file-editor document-view" data-testid="document-view">
      <div className="editor-bar">
        <span className="editor-path" title={request.path}>
          {request.path}
        </span>
        {doc && (
          <span className="badge" data-testid="document-pages">
            {paged ? `${doc.pages.length} ${doc.pages.length === 1 ? "page" : "pages"}` : doc.kind.toUpperCase()}
          </span>
        )}
        <span className="badge" title="The text as search reads it; the original is not changed">
          extracted text
        </span>
        <button type="button" className="small-button" data-testid="open-in-viewer" onClick={view}>
          Open in viewer
        </button>
      </div>
      {error && (
        <div className="editor-notice error" role="alert">
          {error}
        </div>
      )}
      {failed && (
        <div className="editor-notice error" role="alert">
          {failed}
        </div>
      )}
      {doc?.note && <div className="editor-notice warning">{doc.note}</div>}
      {!doc && !error && <div className="empty-panel muted">Reading {request.path}…</div>}
      {doc && (
        <div className="document-pages" ref={pages}>
          {doc.pages.map((p, i) => (
            <section
              key={i}
              className={p.number !== null && p.number === request.page ? "document-page target" : "document-page"}
              data-page={p.number ?? undefined}
              aria-label={p.number !== null ? `Page ${p.number}` : undefined}
            >
              {p.number !== null && <h4 className="page-number">Page {p.number}</h4>}
              {p.text.trim() ? <Markdown text={p.text} /> : <p className="muted small">No text on this page.</p>}
            </section>
          ))}
        </div>
      )}
    </div>
  );
}
