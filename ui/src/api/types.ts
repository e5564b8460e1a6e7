// The data that crosses the IPC boundary between the page and cairn-desktop.
// Field names are snake_case on both sides (the Rust structs serialize as they are).
// Keep this file in step with src-tauri/src/ipc/*.rs.

/** An error from a command: the page branches on `code`, never on `message`. */
export interface AppError {
  code: ErrorCode;
  message: string;
}

export type ErrorCode =
  | "busy" // the agent is running; wait or stop it
  | "conflict" // the file changed on disk since it was read (write_file)
  | "not_found"
  | "invalid_path" // outside the workspace, .cairn/, a symlink that escapes ...
  | "invalid" // bad input (empty title, malformed settings ...)
  | "provider" // a model provider could not be built or reached
  | "io"
  | "internal";

// ---------------------------------------------------------------- app

export interface AppInfo {
  version: string;
  workspace: string; // absolute folder
  provider: string; // provider name from the settings, or "local"
  model: string;
  /** The bundled local model is in use because nothing else is configured. */
  bundled_model: boolean;
  /** Whether the chat model can call tools. */
  tools: boolean;
  /** Things to tell the user at start (index rebuilt, model missing ...). */
  notices: string[];
}

// ---------------------------------------------------------------- sessions

export interface SessionSummary {
  id: string;
  title: string | null;
  /** Milliseconds since the epoch of the last write. */
  updated_ms: number;
  messages: number;
}

/** One row of the transcript on the active branch, oldest first. */
export type TranscriptItem =
  | {
      kind: "user";
      entry_id: string;
      text: string;
      /** Other user messages with the same parent (edits), this one included. */
      siblings: BranchSiblings | null;
    }
  | {
      kind: "assistant";
      entry_id: string;
      text: string;
      /** The model's reasoning before the answer; absent when it showed none. */
      thinking?: string;
      tool_calls: ToolCallView[];
      /** "aborted", "error", "max_tokens" ... when it did not end normally. */
      stop: string | null;
    }
  | { kind: "summary"; entry_id: string; text: string; what: "compaction" | "branch" }
  | { kind: "notice"; entry_id: string; text: string };

export interface BranchSiblings {
  /** Entry ids of the sibling user messages, oldest first. */
  ids: string[];
  /** Position of this message among them (0-based). */
  index: number;
}

export interface ToolCallView {
  call_id: string;
  name: string;
  arguments: unknown;
  /** null while it has not finished (or never ran). */
  result: { content: string; is_error: boolean } | null;
}

export interface SessionView {
  id: string;
  title: string | null;
  items: TranscriptItem[];
  /** Entry id of the active leaf (null for an empty session). */
  leaf: string | null;
  /** Number of leaves (branches) in the session. */
  branches: number;
  /** Whether a run is going on in this session. */
  running: boolean;
}

// ---------------------------------------------------------------- runs

export type ApprovalDecision = "allow_once" | "allow_always" | "deny";
export type NoticeLevel = "info" | "warning" | "error";
export type Phase = "idle" | "turn" | "compaction" | "branch_summary" | "retry";

export type Outcome =
  | { kind: "completed" }
  | { kind: "blocked"; reason: string }
  | { kind: "max_steps"; steps: number }
  | { kind: "stalled"; tool: string; repeats: number; detail?: string | null }
  | { kind: "aborted" }
  | { kind: "failed"; error: { code: string; message: string } };

export interface RunSummary {
  steps: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
}

/** A message as stored (see cairn-protocol message.rs). */
export type Message =
  | { role: "user"; content: ContentBlock[] }
  | {
      role: "assistant";
      content: ContentBlock[];
      stop_reason: string;
      usage?: { input_tokens: number; output_tokens: number };
      model?: string;
    }
  | { role: "tool_result"; call_id: string; tool_name: string; content: string; is_error: boolean };

export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  /** Reasoning: `redacted` holds what the provider encrypted (never shown). */
  | { type: "thinking"; text: string; signature?: string; redacted?: string };

/** A file a tool call is about to change: the text on disk (null for a new file) and after. */
export interface FileChange {
  path: string;
  before: string | null;
  after: string;
}

/**
 * Events of one run, in order, through the Channel given to send_message / edit_message /
 * retry. `message_delta`s (and `thinking_delta`s) are coalesced to about one per frame. `agent_end` is always
 * the last event of a run.
 */
export type RunEvent =
  | { type: "agent_start"; run_id: string; session_id: string }
  | { type: "phase_changed"; phase: Phase }
  | { type: "turn_start"; step: number }
  | { type: "message_start"; role: string }
  | { type: "message_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "message_end"; entry_id: string; message: Message }
  | { type: "tool_start"; call_id: string; name: string; arguments: unknown; change?: FileChange | null }
  | { type: "tool_update"; call_id: string; text: string }
  | { type: "tool_end"; call_id: string; name: string; content: string; is_error: boolean }
  | {
      type: "approval_requested";
      request_id: string;
      call_id: string;
      name: string;
      arguments: unknown;
      change?: FileChange | null;
      /** Why this call asks (e.g. a protected path), shown above the buttons. */
      reason?: string | null;
      /** What "Allow always" would allow from now on in this session ("the `write_file` tool",
       * "bash commands starting with `git status`"); absent: the call can only be allowed once. */
      always?: string | null;
    }
  | { type: "approval_resolved"; request_id: string; call_id: string; decision: ApprovalDecision }
  | { type: "turn_end"; step: number; tool_calls: number }
  | { type: "notice"; level: NoticeLevel; message: string }
  | { type: "context_gathered"; parts: { name: string; chars: number; cut: boolean }[]; recall: string[]; intent?: Intent | null }
  | { type: "compaction_start"; reason: string }
  | { type: "compaction_end"; tokens_before: number; tokens_after: number }
  | { type: "memory_flushed"; path: string; bullets: number }
  | { type: "work_items"; items: WorkItem[] }
  | { type: "retry"; attempt: number; delay_ms: number; reason: string }
  /** An event of a subagent started by the tool call `call_id` (nested for deeper ones). */
  | { type: "subagent"; task_id: string; agent: string; call_id: string; event: RunEvent }
  | { type: "agent_end"; outcome: Outcome; summary: RunSummary; session_id: string; answer?: string | null };

/** The intent step's reading of the message: goal, constraints, searches recall ran. */
export interface Intent {
  goal: string;
  constraints: string[];
  lookups: string[];
}

export type WorkStatus = "pending" | "in_progress" | "done" | "blocked";

/** One item of the run's work list (todo_write). */
export interface WorkItem {
  id: string;
  text: string;
  status: WorkStatus;
  note?: string | null;
}

// ---------------------------------------------------------------- workspace files

export interface FileNode {
  name: string;
  /** Workspace-relative, "/"-separated. */
  path: string;
  dir: boolean;
  children: FileNode[]; // empty for files
}

export interface FileText {
  path: string;
  text: string;
  /** Opaque version of what was read; give it back to write_file. */
  version: string;
}

/** write_file refuses with code "conflict" when the file's version is not `base_version`. */
export interface SavedFile {
  path: string;
  version: string;
}

// ---------------------------------------------------------------- memory

export interface SearchHit {
  path: string;
  start_line: number;
  end_line: number;
  heading: string;
  /** The snippet cut into plain-text parts; `hit` parts matched the query. */
  parts: { text: string; hit: boolean }[];
}

export interface SearchResults {
  hits: SearchHit[];
  /** The index was still catching up when the search ran. */
  stale: boolean;
  took_ms: number;
  /** How the hits were found (null when the query had nothing to search). */
  mode?: "keyword" | "semantic" | "hybrid" | null;
  /** With search by meaning: chunks with their vectors, of all in the index. */
  coverage?: { embedded: number; chunks: number } | null;
}

export interface IndexStatus {
  files: number;
  chunks: number;
  catching_up: boolean;
  read_only: boolean;
  last_error: string | null;
  /** The model of search by meaning; null: keyword search only. */
  embedding_model: string | null;
  /** Distinct chunks with their vectors, of to_embed. */
  embedded: number;
  to_embed: number;
  embed_error: string | null;
}

export interface MemoryOverview {
  today_path: string; // memory/YYYY-MM-DD.md
  today_text: string; // "" when there is no log today
  /** Milliseconds since the epoch, null when never. */
  last_consolidation_ms: number | null;
  next_consolidation_ms: number | null;
  /** False when consolidation is off (no model allowed to write memory, or interval 0). */
  consolidation_enabled: boolean;
}

export interface ConsolidationResult {
  status: "written" | "nothing_new" | "rejected" | "deferred" | "busy" | "dry_run" | "failed";
  message: string;
  added: number;
  removed: number;
  /** Workspace-relative path of the MEMORY.md backup, when one was taken. */
  backup: string | null;
}

/** App-wide events through the Channel given to `subscribe`. */
export type AppEvent =
  | { type: "file_changed"; path: string; version: string | null } // null: deleted
  | { type: "files_changed" } // the tree changed (files added or removed)
  | { type: "index_status"; status: IndexStatus }
  | { type: "memory_flushed"; path: string; bullets: number }
  | { type: "consolidated"; result: ConsolidationResult }
  | { type: "sessions_changed" }
  /** Files dropped onto the window: copied into knowledge/inbox/ (or referred to where they are), or refused. */
  | { type: "files_dropped"; added: string[]; refused: { name: string; reason: string }[] }
  /** Files are dragged over the window (false: they left it or were dropped). */
  | { type: "drag_over"; active: boolean }
  /** The bundled models are being downloaded at the first start (finished: done or given up). */
  | { type: "model_fetch"; package: string; done: number; total: number; finished: boolean }
  /** A local model is loading (0 to 1); null once loaded. */
  | { type: "model_load"; progress: number | null };

/** Where a change the agent made stands now. */
export type ChangeState = "applied" | "reverted" | "changed_since";

/** A change the agent made to a file in a run, kept in `.cairn/changes/` so it can be reverted. */
export interface AgentChange {
  id: string;
  session_id: string;
  run_id: string;
  /** The tool call that made it (its card). */
  call_id: string;
  tool: string;
  path: string;
  existed: boolean;
  made_at: string;
  reverted_at: string | null;
  /** The text before (null: the call created the file) and after. */
  before: string | null;
  after: string;
  /** "applied": the file holds what the change left, so it can be reverted. */
  state: ChangeState;
}

/** A file or folder deleted from the workspace pane, kept in `.cairn/trash/`. */
export interface Trashed {
  id: string;
  /** Where it was. */
  path: string;
  dir: boolean;
  deleted_at: string;
}

/** What importing a ChatGPT or Claude export made. */
export interface ImportReport {
  source: string;
  /** Conversations written as new sessions. */
  sessions: number;
  /** Conversations imported before and unchanged since, left as they are. */
  already: number;
}

/** How full the open session's context window is (estimated tokens). */
export interface ContextUsage {
  used: number;
  window: number;
  /** Kept free for the answer: passing window - reserve compacts. */
  reserve: number;
}

/** A session whose text matches a search, with the matching part. */
export interface SessionHit {
  id: string;
  snippet: string;
}

// ---------------------------------------------------------------- settings

export type ProviderKind = "openai" | "anthropic" | "local";

/** A model server found running on this machine, with its models. */
export interface LocalServer {
  kind: "ollama" | "lm_studio" | "llama_cpp" | "vllm";
  /** The OpenAI-compatible root, e.g. http://127.0.0.1:11434/v1. */
  base_url: string;
  /** Each model with the context window the server runs it with, when it says. */
  models: { id: string; context_window: number | null }[];
}

export interface ProviderSettings {
  name: string;
  kind: ProviderKind;
  base_url: string | null;
  model: string | null;
  model_path: string | null; // local
  context_window: number | null;
  /** Whether a key is stored for it (the key itself never reaches the page). */
  has_key: boolean;
}

export interface Limits {
  max_steps: number | null;
  deadline_s: number | null;
  /** Open work items never let a run complete. */
  strict: boolean;
  chat_timeout_s: number | null;
  memory_flush_timeout_s: number | null;
  compaction_timeout_s: number | null;
  consolidation_timeout_s: number | null;
  subagents_timeout_s: number | null;
  subagent_max_depth: number | null;
}

export interface SettingsView {
  default_provider: string | null;
  providers: ProviderSettings[];
  /** Per purpose: "provider", "provider/model" or "model"; null = the chat model. */
  models: {
    memory_flush: string | null;
    consolidation: string | null;
    compaction: string | null;
  };
  /** The bundled model's path (read-only) and where it was looked for. */
  bundled_model_path: string;
  consolidation_interval_hours: number | null;
  /** `[memory] embedder`: "local", "none", "provider/model"; null = the bundled model when installed. */
  embedder: string | null;
  /** Whether the bundled embedding model is installed (read-only). */
  bundled_embedder_installed: boolean;
  /** "allow" | "ask" | "deny" for every tool, and per-tool overrides. */
  approval: { default: "allow" | "ask" | "deny"; tools: Record<string, "allow" | "ask" | "deny"> };
  workspace: string | null;
  /** Limits of a run ([run], [timeouts], [subagents]); null = the default. */
  limits: Limits;
  /** Where the settings live. */
  path: string;
  /** Where API keys are kept (read-only). */
  key_store: KeyStore;
  /** `[web] allow_private`: web_fetch may reach loopback and private addresses. */
  web_allow_private: boolean;
  /** The user's hook commands (read-only: edited in config.toml). */
  hooks: HookView[];
}

export interface HookView {
  event: "pre_tool" | "post_tool" | "user_prompt" | "stop" | "session_start";
  matcher: string | null;
  command: string;
  timeout_s: number | null;
}

/** The system keyring, or the key file on a machine without one. */
export interface KeyStore {
  kind: "keyring" | "file";
  /** The key file, when keys are kept in one. */
  path: string | null;
  /** One sentence saying where keys are kept and how they are protected. */
  description: string;
}

export interface ConnectionCheck {
  ok: boolean;
  message: string;
  models: string[];
}

/** An MCP server as the settings show it (McpServerStatus in cairn-protocol). */
export type McpState = "stopped" | "starting" | "running" | "restarting" | "failed";

export interface McpToolInfo {
  /** The name the model calls: `<server>__<tool>`. */
  name: string;
  server_name: string;
  description: string;
  approval: "allow" | "ask" | "deny";
}

export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  /** The command line or the URL. */
  endpoint: string;
  enabled: boolean;
  state: McpState;
  error?: string;
  restarts: number;
  tools: McpToolInfo[];
}

/** A server added in the settings: a command line (stdio) or a URL (HTTP). */
export interface NewMcpServer {
  name: string;
  command: string;
  url: string;
}
