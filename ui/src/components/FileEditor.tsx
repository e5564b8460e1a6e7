import { useCallback, useEffect, useRef, useState, memo } from "react";
import { describeError, toAppError } from "../api/errors";
import type { AppEvent } from "../api/types";
import type { EditorHandle } from "../editor/codemirror";
import { useBackend } from "../lib/backendContext";
import { useAppEvents } from "../lib/hub";
import { CompareView } from "./CompareView";
import { Markdown } from "./Markdown";

const PREVIEW_KEY = "cairn.editor.preview";

export interface OpenRequest {
  path: string;
  start?: number;
  end?: number;
  nonce: number;
}

export type EditorStatus = "saved" | "modified" | "conflict";

export interface EditorState {
  path: string | null;
  status: EditorStatus;
  changedOnDisk: boolean;
}

let editorModule: Promise<typeof import("../editor/codemirror")> | null = null;
const loadEditor = () => (editorModule ??= import("../editor/codemirror"));

interface OpenFile {
  path: string;
  version: string;
  disk: string;
  /** In a folder searched in place: shown, never saved. */
  readOnly: boolean;
}

export const FileEditor = memo(function FileEditor({ request, onState }: { request: OpenRequest | null; onState(s: EditorState): void }) {
  const backend = useBackend();
  const host = useRef<HTMLDivElement>(null);
  const handle = useRef<EditorHandle | null>(null);
  const fileRef = useRef<OpenFile | null>(null);
  const [file, setFileState] = useState<OpenFile | null>(null);
  const [modified, setModified] = useState(false);
  const modifiedRef = useRef(false);
  const [conflict, setConflict] = useState(false);
  const [outside, setOutside] = useState<"changed" | "deleted" | null>(null);
  const [compare, setCompare] = useState<{ disk: string; mine: string } | null>(null);
  const [pending, setPending] = useState<OpenRequest | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const saving = useRef(false);
  const deferred = useRef<AppEvent | null>(null);

  const setFile = (f: OpenFile | null) => {
    fileRef.current = f;
    setFileState(f);
  };
  // The rendered preview of a markdown file beside the editor (kept on across files).
  const [preview, setPreview] = useState(() => localStorage.getItem(PREVIEW_KEY) === "1");
  const [previewText, setPreviewText] = useState("");
  const previewTimer = useRef<number | undefined>(undefined);
  const markModified = useCallback(() => {
    const m = !!handle.current && !!fileRef.current && handle.current.getText() !== fileRef.current.disk;
    modifiedRef.current = m;
    setModified(m);
    window.clearTimeout(previewTimer.current);
    previewTimer.current = window.setTimeout(() => setPreviewText(handle.current?.getText() ?? ""), 120);
  }, []);
  useEffect(() => () => window.clearTimeout(previewTimer.current), []);
  const togglePreview = () =>
    setPreview((on) => {
      localStorage.setItem(PREVIEW_KEY, on ? "0" : "1");
      if (!on) setPreviewText(handle.current?.getText() ?? "");
      return !on;
    });
  const showPreview = preview && !!file && file.path.toLowerCase().endsWith(".md") && compare === null;

  const status: EditorStatus = conflict ? "conflict" : modified ? "modified" : "saved";
  useEffect(() => onState({ path: file?.path ?? null, status, changedOnDisk: outside !== null }), [file?.path, status, outside, onState]);

  const show = useCallback(
    async (req: OpenRequest) => {
      setPending(null);
      setError(null);
      if (fileRef.current?.path === req.path && handle.current) {
        if (req.start) handle.current.reveal(req.start, req.end ?? req.start);
        handle.current.focus();
        return;
      }
      setLoading(true);
      try {
        const [text, cm] = await Promise.all([backend.readFile(req.path), loadEditor()]);
        if (!host.current) return;
        if (handle.current) handle.current.setText(text.text);
        else handle.current = cm.createEditor(host.current, text.text, { onChange: markModified });
        handle.current.setReadOnly(text.read_only);
        setFile({ path: text.path, version: text.version, disk: text.text, readOnly: text.read_only });
        setConflict(false);
        setOutside(null);
        setCompare(null);
        markModified();
        if (req.start) handle.current.reveal(req.start, req.end ?? req.start);
        handle.current.focus();
      } catch (e) {
        setError(describeError(toAppError(e)));
      } finally {
        setLoading(false);
      }
    },
    [backend, markModified],
  );

  useEffect(() => {
    if (!request) return;
    if (fileRef.current && modifiedRef.current && request.path !== fileRef.current.path) setPending(request);
    else void show(request);
  }, [request, show]);

  useEffect(() => () => handle.current?.destroy(), []);

  const reload = useCallback(async () => {
    const f = fileRef.current;
    if (!f || !handle.current) return;
    try {
      const text = await backend.readFile(f.path);
      setFile({ path: f.path, version: text.version, disk: text.text, readOnly: text.read_only });
      handle.current.setText(text.text);
      setConflict(false);
      setOutside(null);
      setCompare(null);
      markModified();
    } catch (e) {
      setError(describeError(toAppError(e)));
    }
  }, [backend, markModified]);

  const onOutside = useCallback(
    (e: AppEvent) => {
      const f = fileRef.current;
      if (e.type !== "file_changed" || !f || e.path !== f.path || e.version === f.version) return;
      if (e.version === null) setOutside("deleted");
      else if (!modifiedRef.current) void reload();
      else setOutside("changed");
    },
    [reload],
  );
  useAppEvents((e) => {
    if (saving.current && e.type === "file_changed") deferred.current = e;
    else onOutside(e);
  });

  const write = useCallback(
    async (base: string | null | undefined) => {
      const f = fileRef.current;
      if (!f || !handle.current || saving.current || f.readOnly) return;
      const text = handle.current.getText();
      saving.current = true;
      setError(null);
      try {
        const saved = await backend.writeFile(f.path, text, base === undefined ? f.version : base);
        setFile({ path: f.path, version: saved.version, disk: text, readOnly: false });
        setConflict(false);
        setOutside(null);
        setCompare(null);
        markModified();
      } catch (e) {
        const err = toAppError(e);
        if (err.code === "conflict") setConflict(true);
        else setError(describeError(err));
      } finally {
        saving.current = false;
        const ev = deferred.current;
        deferred.current = null;
        if (ev) onOutside(ev);
      }
    },
    [backend, markModified, onOutside],
  );

  // Ctrl+S saves wherever the focus is, while a file is open.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        if (fileRef.current) void write(undefined);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [write]);

  const openCompare = async () => {
    const f = fileRef.current;
    if (!f || !handle.current) return;
    try {
      const disk = await backend.readFile(f.path);
      setCompare({ disk: disk.text, mine: handle.current.getText() });
    } catch (e) {
      setError(describeError(toAppError(e)));
    }
  };

  return (
    <div className="file-editor">
      {file && (
        <div className="editor-bar">
          <span className="editor-path" title={file.path}>
            {file.path}
          </span>
          {file.readOnly ? (
            <span className="badge" data-testid="editor-read-only" title="In a folder searched in place: Cairn reads it but never writes it">
              read-only
            </span>
          ) : (
            <span className={`editor-status ${status}`} data-testid="editor-status">
              {status}
            </span>
          )}
          {file.path.toLowerCase().endsWith(".md") && (
            <button type="button" className="small-button" aria-pressed={preview} onClick={togglePreview} title="Show the rendered markdown beside the text">
              Preview
            </button>
          )}
          {!file.readOnly && (
            <button type="button" className="small-button" onClick={() => void write(undefined)} disabled={!modified || conflict} title="Save (Ctrl+S)">
              Save
            </button>
          )}
        </div>
      )}
      {pending && file && (
        <div className="editor-notice warning" role="alert">
          <span>{file.path} has unsaved changes.</span>
          <button type="button" onClick={() => void write(undefined).then(() => (modifiedRef.current ? undefined : show(pending)))}>Save and open</button>
          <button type="button" onClick={() => void show(pending)}>Discard and open</button>
          <button type="button" onClick={() => setPending(null)}>Cancel</button>
        </div>
      )}
      {conflict && (
        <div className="editor-notice conflict" role="alert">
          <span>The file changed on disk since you opened it.</span>
          <button type="button" data-testid="conflict-reload" onClick={() => void reload()} title="Discard your changes and load the file from disk">
            Reload
          </button>
          <button type="button" data-testid="conflict-overwrite" onClick={() => void write(null)} title="Save your text over the file on disk">
            Overwrite
          </button>
          <button type="button" data-testid="conflict-compare" onClick={() => void openCompare()}>
            Compare
          </button>
        </div>
      )}
      {!conflict && outside && (
        <div className="editor-notice warning" role="status">
          <span>{outside === "deleted" ? "The file was deleted on disk." : "The file changed on disk; you have unsaved changes."}</span>
          {outside === "changed" && (
            <>
              <button type="button" onClick={() => void reload()}>Reload</button>
              <button type="button" onClick={() => void openCompare()}>Compare</button>
            </>
          )}
        </div>
      )}
      {error && (
        <div className="editor-notice error" role="alert">
          {error}
        </div>
      )}
      {compare && (
        <div className="compare-wrap">
          <div className="compare-actions">
            <button type="button" onClick={() => setCompare(null)}>Close compare</button>
          </div>
          <CompareView disk={compare.disk} mine={compare.mine} />
        </div>
      )}
      <div className="editor-split" hidden={!file || compare !== null}>
        <div className="editor-host" data-testid="editor" ref={host} hidden={!file || compare !== null} />
        {showPreview && (
          <div className="editor-preview" data-testid="editor-preview">
            <Markdown text={previewText} />
          </div>
        )}
      </div>
      {!file && !loading && !error && <div className="empty-panel muted">Open a file from the workspace on the left, or a search result (Ctrl+K).</div>}
      {loading && !file && <div className="empty-panel muted">Opening…</div>}
    </div>
  );
});
