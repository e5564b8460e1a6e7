// The backend the page talks to: one interface, a Tauri implementation (tauri.ts) and a
// fake for tests and for developing the page in a browser (fake.ts).
import type {
  AgentChange,
  AppEvent,
  AppInfo,
  ApprovalDecision,
  ConnectionCheck,
  ConsolidationResult,
  ContextUsage,
  CoverageReport,
  DocumentText,
  FileNode,
  FileText,
  FirstScreen,
  ImportReport,
  IndexStatus,
  LocalServer,
  McpServerStatus,
  MemoryOverview,
  NewMcpServer,
  OutsideFolder,
  PageMarks,
  PickedPictures,
  Picture,
  ProviderSettings,
  QueueMode,
  RunEvent,
  SavedFile,
  SearchResults,
  SessionHit,
  SessionSummary,
  SessionView,
  SettingsView,
  SlashCommand,
  ThinkingLevel,
  Trashed,
  WorkspacePicture,
} from "./types";

export type Listener<T> = (event: T) => void;

export interface Backend {
  appInfo(): Promise<AppInfo>;
  /** What the first screen shows, in one call (made before the first render). */
  firstScreen(): Promise<FirstScreen>;
  /** Tells the shell the first frame is interactive, with when each start-up step came
   * (start-up timing). Call once. */
  ready(marks: PageMarks): Promise<void>;
  /** Opens an http(s) or mailto link in the system browser (the window never navigates). */
  openLink(url: string): Promise<void>;
  /** App-wide events (file changes, index status, flushes, consolidations) until the page closes. */
  subscribe(listener: Listener<AppEvent>): Promise<void>;

  listSessions(): Promise<SessionSummary[]>;
  /** Opens a session and makes it the one runs go to; null makes a new one. */
  openSession(id: string | null): Promise<SessionView>;
  renameSession(id: string, title: string): Promise<void>;
  deleteSession(id: string): Promise<void>;
  /** Moves to the newest leaf under `entryId` (a sibling user message). */
  /** The open session's model from its next message (a configured provider, with `model` or its own); resolves to the model's name. */
  chooseModel(provider: string, model: string | null): Promise<string>;
  /** The open session's thinking level, from its next model call (recorded in the session). */
  setThinking(level: ThinkingLevel): Promise<void>;
  /** `summarize`: keep a summary of the branch left where the conversation goes on. */
  switchBranch(entryId: string, summarize?: boolean): Promise<SessionView>;

  /**
   * Runs a prompt, with the pictures kept for it (after its text); events stream to
   * `listener`, ending with agent_end; resolves after it.
   */
  sendMessage(text: string, listener: Listener<RunEvent>, pictures?: Picture[]): Promise<void>;
  /** Goes on with the open session's interrupted run from its last checkpoint. */
  resumeRun(listener: Listener<RunEvent>): Promise<void>;
  /**
   * Keeps a picture for the next message (pasted, or from a file the page was given):
   * `data` is its bytes in base64. Rejects with "invalid" and why unless it is a PNG,
   * JPEG, WebP or GIF Cairn can read.
   */
  attachPicture(name: string | null, data: string): Promise<Picture>;
  /** Pictures the user picks in the system's dialog, kept for the next message (none if cancelled). */
  pickPictures(): Promise<PickedPictures>;
  /** A kept picture as a data: URL at most `side` pixels on its longest side (4096 at most). */
  pictureThumbnail(picture: Picture, side: number): Promise<string>;
  /**
   * Takes up the run going on (for a page loaded again while it ran): its events from its
   * start go to `listener`, then the rest. Resolves with the session as it was before the run,
   * or null when no run goes on. Events may come before the promise resolves.
   */
  attachRun(listener: Listener<RunEvent>): Promise<SessionView | null>;
  /** Sends a user message into the running run (steering). */
  steer(text: string): Promise<void>;
  /** Queues a follow-up in the core: delivered when the run would have ended, and the run
   * goes on; `follow_ups` events tell the queue. */
  followUp(text: string): Promise<void>;
  /** Takes back the waiting follow-up at `index`: its text, or null when already delivered. */
  takeFollowUp(index: number): Promise<string | null>;
  /** How queued follow-ups are delivered (`[run] follow_up_mode`), from the next save point on. */
  setFollowUpMode(mode: QueueMode): Promise<void>;
  abort(): Promise<void>;
  resolveApproval(requestId: string, decision: ApprovalDecision): Promise<void>;
  /** Branches: the edited text replaces the user message `entryId` on a new branch and runs. */
  editMessage(entryId: string, text: string, listener: Listener<RunEvent>): Promise<void>;
  /** Sends the user message `entryId` again on a new branch. */
  retry(entryId: string, listener: Listener<RunEvent>): Promise<void>;

  /** How full the open session's context is; null before its first run in this app. */
  contextUsage(): Promise<ContextUsage | null>;
  /** Summarises the older part of the open session now, with an optional focus. */
  compactNow(focus: string | null): Promise<SessionView>;
  /** The prompt templates and skills the composer's `/` menu offers, by name. */
  slashCommands(): Promise<SlashCommand[]>;
  /** Saves a session as Markdown where the user picks (the system's dialog); the path, or null if cancelled. */
  exportSession(id: string): Promise<string | null>;
  /** Makes sessions of a ChatGPT or Claude export the user picks; null if cancelled. */
  importConversations(): Promise<ImportReport | null>;
  /** A GGUF file the user picks in the system's dialog (checked to be one); null if cancelled. */
  pickModelFile(): Promise<string | null>;

  listFiles(): Promise<FileNode[]>;
  readFile(path: string): Promise<FileText>;
  /** Rejects with code "conflict" unless the file is still at `baseVersion` (null: overwrite). */
  writeFile(path: string, text: string, baseVersion: string | null): Promise<SavedFile>;
  /** An empty file; rejects with "conflict" when something is there. */
  createFile(path: string): Promise<SavedFile>;
  createFolder(path: string): Promise<void>;
  /** Moves or renames a file or folder; rejects with "conflict" when `to` exists. */
  movePath(from: string, to: string): Promise<void>;
  /** Deletes into the trash (`.cairn/trash/`). */
  trashPath(path: string): Promise<Trashed>;
  listTrash(): Promise<Trashed[]>;
  /** Puts a trashed entry back; rejects with "conflict" when its place is taken. */
  restoreTrash(id: string): Promise<Trashed>;
  /** Model servers running on this machine (Ollama, LM Studio, llama.cpp, vLLM on their default ports). */
  discoverLocalServers(): Promise<LocalServer[]>;
  /** What the agent changed in files during a session, oldest first. */
  listChanges(sessionId: string): Promise<AgentChange[]>;
  /**
   * Reverts one change, or a run's changes to one file (the text before the first comes
   * back); resolves to the file's path. Rejects with "conflict" when the file changed since.
   */
  revertChanges(sessionId: string, ids: string[]): Promise<string>;
  /** Shows the file or folder ("" for the workspace) in the system's file manager. */
  revealPath(path: string): Promise<void>;
  /** The folders searched in place (`[memory] folders`), listed read-only. */
  listFolders(): Promise<OutsideFolder[]>;
  /** A document's text (PDF, DOCX, ODT, EPUB), page by page, as the index reads it. */
  readDocument(path: string): Promise<DocumentText>;
  /** A picture file of the workspace (PNG, JPEG, WebP, GIF) for its view: the picture, its size and its text. */
  readPicture(path: string): Promise<WorkspacePicture>;
  /** Opens a document (nothing else) in the system's viewer. */
  openInViewer(path: string): Promise<void>;
  /** A folder the user picks in the system's dialog; null if cancelled. */
  pickFolder(): Promise<string | null>;
  /** Starts the app again (settings read at start); rejects with "busy" during a run. */
  restartApp(): Promise<void>;

  memorySearch(query: string, limit: number): Promise<SearchResults>;
  /** Sessions whose text matches `query`, best first, one hit each. */
  searchSessions(query: string): Promise<SessionHit[]>;
  indexStatus(): Promise<IndexStatus>;
  memoryOverview(): Promise<MemoryOverview>;
  /** What the index reaches: counts, and the files it leaves out with why. */
  indexCoverage(): Promise<CoverageReport>;
  consolidateNow(): Promise<ConsolidationResult>;

  getSettings(): Promise<SettingsView>;
  /** Saves config.toml and rebuilds the chat model; returns the new app info. */
  saveSettings(settings: SettingsView): Promise<AppInfo>;
  /** Stores (or with null removes) the provider's API key in the key store. */
  setApiKey(provider: string, key: string | null): Promise<void>;
  /** Tries the provider (as edited, not yet saved): lists its models. */
  checkProvider(provider: ProviderSettings, key: string | null): Promise<ConnectionCheck>;

  /** The MCP servers; with `start`, enabled ones are started first so their tools are known. */
  mcpServers(start: boolean): Promise<McpServerStatus[]>;
  /** Adds a server to config.toml at once (rejects with "invalid" and the reason). */
  addMcpServer(server: NewMcpServer): Promise<McpServerStatus[]>;
  setMcpServerEnabled(name: string, enabled: boolean): Promise<McpServerStatus[]>;
  removeMcpServer(name: string): Promise<McpServerStatus[]>;
}
