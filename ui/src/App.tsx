import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Backend } from "./api/backend";
import { toAppError } from "./api/errors";
import type { AppInfo, FirstScreen, IndexStatus, SearchHit } from "./api/types";
import { importMessage } from "./lib/importMessage";
import { ChangesView } from "./components/ChangesView";
import { ChatView } from "./components/ChatView";
import { DocumentView, type DocumentRequest } from "./components/DocumentView";
import { PictureView } from "./components/PictureView";
import { FileEditor, type EditorState, type OpenRequest } from "./components/FileEditor";
import { Icon } from "./components/Icon";
import { MemoryPanel, type FlushNote } from "./components/MemoryPanel";
import { ModelPicker } from "./components/ModelPicker";
import { ThinkingPicker } from "./components/ThinkingPicker";
import { RightPanel, type PanelTab } from "./components/RightPanel";
import { RunDetails } from "./components/RunDetails";
import { SearchPanel } from "./components/SearchPanel";
import { SettingsDialog } from "./components/SettingsDialog";
import { Sidebar } from "./components/Sidebar";
import { Splitter } from "./components/Splitter";
import { StatusBar } from "./components/StatusBar";
import { Toasts } from "./components/Toasts";
import { BackendContext } from "./lib/backendContext";
import { EventHub, HubContext } from "./lib/hub";
import { mark, startMarks } from "./lib/startMarks";
import { useShortcuts } from "./lib/useShortcuts";
import { isDocument } from "./lib/documents";
import { isPicture } from "./lib/pictures";
import { ChangesContext } from "./lib/changes";
import { useChanges } from "./state/useChanges";
import { useChat } from "./state/useChat";
import { useSessions } from "./state/useSessions";
import { useToasts } from "./state/useToasts";
import { ContextMeter } from "./components/ContextMeter";

const WIDTH_KEY = "cairn.panel.width";
const nextFrame = (f: () => void) => (typeof requestAnimationFrame === "function" ? requestAnimationFrame(f) : window.setTimeout(f, 16));

/** `first`: what the first screen shows, loaded before the first render (none while a run
 * goes on, or when the shell refused it: the page then asks for each part itself). */
export function App({ backend, first = null }: { backend: Backend; first?: FirstScreen | null }) {
  const known = first?.session ? first : null;
  const [hub] = useState(() => new EventHub());
  const [info, setInfo] = useState<AppInfo | null>(known?.info ?? null);
  const [index, setIndex] = useState<IndexStatus | null>(known?.index ?? null);
  const [flushes, setFlushes] = useState<FlushNote[]>([]);
  const [toasts, notify, dismiss] = useToasts();
  const sessions = useSessions(backend, notify, known);
  const [run, chat] = useChat(backend, sessions.current, sessions.setCurrent, { notify, onRunEnd: sessions.refresh });
  // A write that ended may have kept a change: the list follows the run's finished calls.
  const callsEnded = run.items.reduce((n, it) => n + (it.kind === "assistant" ? it.tools.filter((t) => t.result !== null).length : 0), 0);
  const changes = useChanges(backend, hub, sessions.current?.id ?? null, `${callsEnded}/${run.running}`);
  const [tab, setTab] = useState<PanelTab>("editor");
  const [panelOpen, setPanelOpen] = useState(true);
  const [width, setWidth] = useState(() => Number(localStorage.getItem(WIDTH_KEY)) || 460);
  const [openRequest, setOpenRequest] = useState<OpenRequest | null>(null);
  // A document (PDF, DOCX ...) shows its text, a picture itself, in place of the editor,
  // which keeps its file.
  const [docRequest, setDocRequest] = useState<(DocumentRequest & { kind: "document" | "picture" }) | null>(null);
  const [editor, setEditor] = useState<EditorState>({ path: null, status: "saved", changedOnDisk: false });
  const [overlay, setOverlay] = useState<"search" | "settings" | null>(null);
  const [booted, setBooted] = useState(known !== null);
  const started = useRef(false);
  const { refresh: refreshSessions, boot } = sessions;

  // Start-up: events first (so nothing is missed), then what the first screen needs.
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    mark("rendered");
    backend.subscribe(hub.emit).catch((e: unknown) => notify(toAppError(e)));
    // Read again once subscribed: a change before that sent no event here.
    backend
      .indexStatus()
      .then((now) => setIndex((shown) => (JSON.stringify(shown) === JSON.stringify(now) ? shown : now)))
      .catch(() => undefined);
    if (known) {
      known.info.notices.forEach((n) => notify(n, "info"));
      return;
    }
    // A run still going on (the page was loaded again) is shown where it is.
    const first = chat
      .takeUp()
      .catch(() => false)
      .then((taken) => (taken ? refreshSessions() : boot()));
    Promise.all([backend.appInfo(), first])
      .then(([appInfo]) => {
        mark("booted");
        setInfo(appInfo);
        appInfo.notices.forEach((n) => notify(n, "info"));
        setBooted(true);
      })
      .catch((e: unknown) => {
        notify(toAppError(e));
        setBooted(true);
      });
  }, [backend, hub, notify, boot, chat, refreshSessions, known]);

  // Tell the shell the first screen is up and usable (start-up timing).
  useEffect(() => {
    if (!booted) return;
    nextFrame(() => {
      mark("frame");
      void backend.ready(startMarks()).catch(() => undefined);
    });
  }, [booted, backend]);

  useEffect(
    () =>
      hub.on((e) => {
        if (e.type === "index_status") setIndex(e.status);
        else if (e.type === "memory_flushed") setFlushes((f) => [{ path: e.path, bullets: e.bullets, at: Date.now() }, ...f].slice(0, 30));
        else if (e.type === "sessions_changed") refreshSessions();
        else if (e.type === "files_dropped" && e.refused.length > 0) notify(`Not added: ${e.refused.map((r) => `${r.name} (${r.reason})`).join("; ")}`, "info");
      }),
    [hub, refreshSessions, notify],
  );

  useEffect(() => localStorage.setItem(WIDTH_KEY, String(width)), [width]);

  const openFile = useCallback((path: string, start?: number, end?: number, page?: number) => {
    const nonce = Date.now() + Math.random();
    if (isDocument(path)) {
      setDocRequest({ kind: "document", path, page, nonce });
    } else if (isPicture(path)) {
      setDocRequest({ kind: "picture", path, nonce });
    } else {
      setDocRequest(null);
      setOpenRequest({ path, start, end, nonce });
    }
    setTab("editor");
    setPanelOpen(true);
  }, []);
  const openSettings = useCallback(() => setOverlay("settings"), []);
  const openHit = useCallback((hit: SearchHit) => openFile(hit.path, hit.start_line, hit.end_line, hit.page ?? undefined), [openFile]);

  useShortcuts({
    search: () => setOverlay("search"),
    newSession: () => !run.running && sessions.create(),
    settings: () => setOverlay("settings"),
    escape: () => {
      if (run.running && overlay === null) chat.abort();
    },
  });

  const currentId = sessions.current?.id ?? null;
  const { list: sessionList, open: openSession, create, rename, remove } = sessions;
  const sessionProps = useMemo(
    () => ({
      sessions: sessionList,
      currentId,
      branches: sessions.current?.branches ?? 1,
      onOpen: (id: string) => id !== currentId && openSession(id),
      onNew: create,
      onRename: rename,
      onDelete: remove,
      onExport: (id: string) =>
        backend
          .exportSession(id)
          .then((path) => path && notify(`Saved ${path}`, "info"))
          .catch((e: unknown) => notify(toAppError(e))),
      onImport: () =>
        backend
          .importConversations()
          .then((r) => {
            if (!r) return;
            notify(importMessage(r), "info");
            sessions.refresh();
          })
          .catch((e: unknown) => notify(toAppError(e))),
    }),
    [sessionList, currentId, sessions.current?.branches, openSession, create, rename, remove, backend, notify, sessions.refresh],
  );

  // The list follows sessions_changed (a title made after the first answer), the open view may not.
  const listedTitle = sessionList.find((s) => s.id === currentId)?.title;
  const title = (listedTitle ?? sessions.current?.title)?.trim() || (sessions.current?.items.length ? "Untitled" : "New session");
  const fileName = (docRequest?.path ?? editor.path)?.split("/").pop();
  const editorLabel = docRequest ? (
    <>{fileName}</>
  ) : (
    <>
      {fileName ?? "Editor"}
      {editor.status !== "saved" && <span className={`dot ${editor.status}`} aria-label={editor.status} title={editor.status} />}
      {editor.changedOnDisk && <span className="badge warn">changed on disk</span>}
    </>
  );

  return (
    <BackendContext.Provider value={backend}>
      <HubContext.Provider value={hub}>
        <ChangesContext.Provider value={changes}>
          <div className={panelOpen ? "app" : "app panel-closed"} style={{ ["--panel-width" as string]: `${width}px` }}>
            <Sidebar openPath={docRequest?.path ?? editor.path} onOpenFile={openFile} sessions={sessionProps} />
            <main className="main">
              <header className="topbar">
                <h1 className="session-heading" title={title}>
                  {title}
                </h1>
                {info && <ModelPicker info={info} sessionId={currentId} notify={notify} onSettings={openSettings} />}
                <ThinkingPicker sessionId={currentId} level={sessions.current?.thinking ?? null} notify={notify} />
                <span className="spacer" />
                <ContextMeter sessionId={currentId} running={run.running} onCompacted={sessions.setCurrent} />
                <button type="button" className="icon-button" aria-label="Search memory (Ctrl+K)" title="Search memory (Ctrl+K)" onClick={() => setOverlay("search")}>
                  <Icon name="search" />
                </button>
                <button type="button" className="icon-button" data-testid="settings-button" aria-label="Settings (Ctrl+,)" title="Settings (Ctrl+,)" onClick={() => setOverlay("settings")}>
                  <Icon name="gear" />
                </button>
                {!panelOpen && (
                  <button type="button" className="icon-button" aria-label="Show side panel" title="Show panel" onClick={() => setPanelOpen(true)}>
                    <Icon name="panel" />
                  </button>
                )}
              </header>
              <ChatView info={info} session={sessions.current} run={run} chat={chat} onOpenFile={openFile} onOpenSettings={openSettings} notify={notify} />
            </main>
            {panelOpen && <Splitter width={width} onWidth={setWidth} />}
            <div className="right-wrap" hidden={!panelOpen}>
              <RightPanel
                tab={tab}
                onTab={setTab}
                onCollapse={() => setPanelOpen(false)}
                editorLabel={editorLabel}
                editor={
                  <>
                    {docRequest?.kind === "document" && <DocumentView request={docRequest} />}
                    {docRequest?.kind === "picture" && <PictureView request={docRequest} />}
                    <div className="pane-stack" hidden={docRequest !== null}>
                      <FileEditor request={openRequest} onState={setEditor} />
                    </div>
                  </>
                }
                memory={<MemoryPanel flushes={flushes} onOpenFile={openFile} />}
                run={<RunDetails run={run} />}
                changes={<ChangesView onOpenFile={openFile} />}
              />
            </div>
            <StatusBar info={info} index={index} phase={run.phase} running={run.running} />
          </div>
          {overlay === "search" && <SearchPanel status={index} onClose={() => setOverlay(null)} onOpenHit={openHit} />}
          {overlay === "settings" && <SettingsDialog onClose={() => setOverlay(null)} onSaved={(i) => setInfo(i)} />}
          <Toasts toasts={toasts} onDismiss={dismiss} />
        </ChangesContext.Provider>
      </HubContext.Provider>
    </BackendContext.Provider>
  );
}
