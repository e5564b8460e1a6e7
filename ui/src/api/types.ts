// Made from the Rust types that cross between cairn-desktop and the page; do not
// edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p
// cairn-desktop contract` writes it.

/** An error from a command: the page branches on `code`, never on `message`. */
export type AppError = { code: ErrorCode; message: string };

/** What went wrong, as a stable code. */
export type ErrorCode =
  | "busy"
  | "conflict"
  | "not_found"
  | "invalid_path"
  | "invalid"
  | "provider"
  | "io"
  | "internal";

/** What the window shows about the app. */
export type AppInfo = {
  version: string;
  /** The workspace folder (absolute). */
  workspace: string;
  /** The provider's name in the settings, or `local`. */
  provider: string;
  model: string;
  /** The bundled local model is in use because nothing else is configured. */
  bundled_model: boolean;
  /** Whether the chat model can call tools. */
  tools: boolean;
  /** Things to tell the user at start (index rebuilt, model missing ...). */
  notices: Array<string>;
  /**
   * Why memory is not written in the background and how to turn it on, when only a
   * local model is configured.
   */
  memory_paused: string | null;
};

/** A session in the sidebar. */
export type SessionSummary = {
  id: string;
  title: string | null;
  /** Milliseconds since the epoch of the last write. */
  updated_ms: number;
  messages: number;
};

/** One row of the transcript on the active branch, oldest first. */
export type TranscriptItem =
  | { "kind": "user"; entry_id: string; text: string; siblings: BranchSiblings | null }
  | {
    "kind": "assistant";
    entry_id: string;
    text: string;
    /** The model's reasoning before the answer; empty when it showed none. */
    thinking?: string;
    tool_calls: Array<ToolCallView>;
    stop: string | null;
  }
  | { "kind": "summary"; entry_id: string; text: string; what: SummaryOf };

/** What a summary in the transcript stands for. */
export type SummaryOf = "compaction" | "branch";

/** The user messages with the same parent (edits), this one included. */
export type BranchSiblings = {
  /** Their entry ids, oldest first. */
  ids: Array<string>;
  /** This message's place among them (0-based). */
  index: number;
};

export type ToolCallView = {
  call_id: string;
  name: string;
  arguments: unknown;
  /** `None` while it has not finished (or never ran). */
  result: ToolResultView | null;
};

export type ToolResultView = { content: string; is_error: boolean };

/** A session as the page shows it: its active branch. */
export type SessionView = {
  id: string;
  title: string | null;
  items: Array<TranscriptItem>;
  /** Entry id of the active leaf (`None` for an empty session). */
  leaf: string | null;
  /** Number of leaves (branches) in the session. */
  branches: number;
  /** Whether a run is going on in this session. */
  running: boolean;
};

/** The answer to an approval request. */
export type ApprovalDecision = "allow_once" | "allow_always" | "deny";

/** How loud a notice is. */
export type NoticeLevel = "info" | "warning" | "error";

/** What the harness is doing. Structural operations need `Idle`. */
export type Phase = "idle" | "turn" | "compaction" | "branch_summary" | "retry";

/** The end of a run. */
export type Outcome =
  | { "kind": "completed" }
  | { "kind": "blocked"; reason: string }
  | { "kind": "max_steps"; steps: number }
  | { "kind": "stalled"; tool: string; repeats: number; detail?: string | null }
  | { "kind": "aborted" }
  | { "kind": "failed"; error: ErrorInfo };

/** A serializable error: the kind plus a human readable message. */
export type ErrorInfo = { code: ErrorKind; message: string };

/** What kind of failure happened. Front ends branch on this, never on the message text. */
export type ErrorKind =
  | "context_overflow"
  | "rate_limited"
  | "auth"
  | "bad_request"
  | "transient"
  | "fatal"
  | "aborted"
  | "timeout"
  | "busy"
  | "io"
  | "invalid";

/** Per-run figures carried by `agent_end`. */
export type RunSummary = {
  /** Model calls made. */
  steps: number;
  /** Tool calls answered (executed, denied or interrupted). */
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
};

/** A message in a conversation. */
export type Message =
  | { "role": "user"; content: Array<ContentBlock> }
  | { "role": "assistant" } & AssistantMessage
  | { "role": "tool_result" } & ToolResultMessage;

/** What the model said in one step: text and tool calls, in the order produced. */
export type AssistantMessage = {
  content: Array<ContentBlock>;
  stop_reason: StopReason;
  usage?: Usage | null;
  model?: string | null;
};

/** The answer to one tool call. */
export type ToolResultMessage = { call_id: string; tool_name: string; content: string; is_error: boolean };

/** Why the model stopped producing output. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "aborted" | "error";

/** Token counts reported by a provider (or estimated when it reports none). */
export type Usage = { input_tokens: number; output_tokens: number; cache_read_tokens?: number };

/** One block of message content. */
export type ContentBlock =
  | { "type": "text"; text: string }
  | { "type": "tool_call" } & ToolCall
  | {
    "type": "thinking";
    text: string;
    /** The provider's signature of `text` (Anthropic), needed to send it back. */
    signature?: string | null;
    /**
     * Reasoning the provider encrypted (Anthropic `redacted_thinking`): never shown,
     * sent back as it came.
     */
    redacted?: string | null;
  };

/**
 * One call the model asked for. `arguments` is the parsed JSON object the model produced
 * (or a string holding the raw text when the model produced invalid JSON).
 */
export type ToolCall = { id: string; name: string; arguments: unknown };

/** A file a tool call is about to change, as it is on disk and as it would be. */
export type FileChange = {
  /** The path relative to the workspace root, with forward slashes. */
  path: string;
  /** The text on disk; `None` when the file does not exist yet. */
  before: string | null;
  /** The text the call would leave. */
  after: string;
};

/** One piece of gathered context. */
export type ContextPart = {
  /** What it is: a file (`MEMORY.md`, `memory/2026-03-01.md`) or a list (`skills`). */
  name: string;
  chars: number;
  /** Cut to fit its budget. */
  cut: boolean;
};

/** Everything a run reports, in order. */
export type RunEvent =
  | { "type": "agent_start"; run_id: string; session_id: string }
  | { "type": "phase_changed"; phase: Phase }
  | { "type": "turn_start"; step: number }
  | { "type": "message_start"; role: string }
  | { "type": "message_delta"; text: string }
  | { "type": "thinking_delta"; text: string }
  | { "type": "message_end"; entry_id: string; message: Message }
  | {
    "type": "tool_start";
    call_id: string;
    name: string;
    arguments: unknown;
    /** For calls that change a file: the file before and after (a diff to show). */
    change?: FileChange | null;
  }
  | { "type": "tool_update"; call_id: string; text: string }
  | { "type": "tool_end"; call_id: string; name: string; content: string; is_error: boolean }
  | {
    "type": "approval_requested";
    request_id: string;
    call_id: string;
    name: string;
    arguments: unknown;
    /** For calls that change a file: the file before and after (a diff to show). */
    change?: FileChange | null;
    /** Why this call asks although the policy might allow it (a protected path). */
    reason?: string | null;
    /**
     * What "allow always" would allow from now on in this session, e.g. the tool
     * `write_file`, or the bash commands starting with `git status`. `None`: the call
     * can only be allowed once.
     */
    always?: string | null;
  }
  | {
    "type": "approval_resolved";
    request_id: string;
    call_id: string;
    decision: ApprovalDecision;
  }
  | { "type": "turn_end"; step: number; tool_calls: number }
  | { "type": "follow_ups"; queued: Array<string>; returned: Array<string> }
  | { "type": "notice"; level: NoticeLevel; message: string }
  | {
    "type": "context_gathered";
    parts: Array<ContextPart>;
    recall: Array<string>;
    /** The intent step's reading of the message, when it ran. */
    intent?: Intent | null;
  }
  | { "type": "compaction_start"; reason: string }
  | { "type": "compaction_end"; tokens_before: number; tokens_after: number }
  | { "type": "memory_flushed"; path: string; bullets: number }
  | { "type": "work_items"; items: Array<WorkItem> }
  | { "type": "retry"; attempt: number; delay_ms: number; reason: string }
  | { "type": "subagent"; task_id: string; agent: string; call_id: string; event: RunEvent }
  | {
    "type": "agent_end";
    outcome: Outcome;
    summary: RunSummary;
    session_id: string;
    /** The model's last answer (on completion, the run's result). */
    answer?: string | null;
  };

/**
 * A short structured reading of what the user asked: what they want, the limits they
 * set, and what is worth looking up in memory for it.
 */
export type Intent = {
  goal: string;
  constraints: Array<string>;
  /** Searches that recall runs besides the message itself. */
  lookups: Array<string>;
};

/** Where a work item stands. */
export type WorkStatus = "pending" | "in_progress" | "done" | "blocked";

/** One item of the list. */
export type WorkItem = { id: string; text: string; status: WorkStatus; note?: string | null };

export type FileNode = { name: string; path: string; dir: boolean; children: Array<FileNode> };

export type FileText = {
  path: string;
  text: string;
  /** Opaque version of what was read; give it back to `write_file`. */
  version: string;
  /** In a folder searched in place: shown, never saved. */
  read_only: boolean;
};

export type SavedFile = { path: string; version: string };

/** A folder of `[memory] folders`, as the file tree shows it. */
export type OutsideFolder = {
  /** The name its files go by (`Notes`, as in `Notes/trips/croatia.md`). */
  name: string;
  /** Where it is on disk. */
  root: string;
  /** Its files and folders, paths starting with `name/`. */
  children: Array<FileNode>;
  /** More entries than the tree lists ([`MAX_FOLDER_NODES`]); search still reaches all. */
  truncated: boolean;
  /** Why it cannot be listed now (missing, unreadable); it is then empty. */
  problem: string | null;
};

export type DocumentPage = {
  /** 1-based, in a paged document (PDF); none for a document read as one text. */
  number: number | null;
  /** Markdown: headings as `#` lines. */
  text: string;
};

export type DocumentText = {
  path: string;
  /** `pdf`, `docx`, `odt` or `epub`. */
  kind: string;
  pages: Array<DocumentPage>;
  /** Said when there is no text to show. */
  note: string | null;
};

export type SearchHit = {
  path: string;
  start_line: number;
  end_line: number;
  heading: string;
  /** The snippet cut into plain-text parts; `hit` parts matched the query. */
  parts: Array<SnippetPart>;
  /** The page of a paged document (a PDF), 1-based. */
  page: number | null;
  /**
   * Where the folder searched in place that holds the file is (its path starts with
   * the folder's name).
   */
  folder: string | null;
};

/** A piece of a snippet: plain text the page shows as text, marked when it matched. */
export type SnippetPart = { text: string; hit: boolean };

/** What a memory search found. */
export type SearchResults = {
  hits: Array<SearchHit>;
  /** The index was still catching up when the search ran. */
  stale: boolean;
  took_ms: number;
  /** How the hits were found (`None` when the query had nothing to search). */
  mode: SearchMode | null;
  /** With search by meaning: chunks with their vectors, of all in the index. */
  coverage: CoverageView | null;
};

/** How a search matches. */
export type SearchMode = "keyword" | "semantic" | "hybrid";

export type CoverageView = { embedded: number; chunks: number };

export type IndexStatus = {
  files: number;
  chunks: number;
  catching_up: boolean;
  read_only: boolean;
  last_error: string | null;
  /** The model of search by meaning; `None`: keyword search only. */
  embedding_model: string | null;
  /** Distinct chunks with their vectors, of `to_embed`. */
  embedded: number;
  to_embed: number;
  embed_error: string | null;
  /** Folders searched in place that cannot be now, each with why. */
  folders_unavailable: Array<string>;
};

export type MemoryOverview = {
  /** `memory/YYYY-MM-DD.md`. */
  today_path: string;
  /** Empty when there is no log today. */
  today_text: string;
  /** Milliseconds since the epoch, `None` when never. */
  last_consolidation_ms: number | null;
  next_consolidation_ms: number | null;
  /** False when consolidation is off (no model may write memory, or the interval is 0). */
  consolidation_enabled: boolean;
};

export type ConsolidationResult = {
  /** A `ConsolidationStatus` name, or `failed`. */
  status: ConsolidationStatus | "failed";
  message: string;
  added: number;
  removed: number;
  /** Workspace-relative path of the MEMORY.md backup, when one was taken. */
  backup: string | null;
};

/** Where a file stands in the index (the Coverage view). */
export type CoverageFile = {
  path: string;
  /** `skipped`, `failed` or `pending` (indexed files are only counted). */
  status: string;
  /** An ignored folder, reported once for everything in it. */
  folder: boolean;
  reason: string | null;
};

/** What the index reaches: the counts, and every file it leaves out with why. */
export type CoverageReport = {
  indexed: number;
  skipped: number;
  failed: number;
  pending: number;
  chunks: number;
  embedded: number;
  /** The files not indexed, failed ones first. */
  left_out: Array<CoverageFile>;
};

/** How a run ended. */
export type ConsolidationStatus =
  | "written"
  | "unchanged"
  | "nothing_new"
  | "rejected"
  | "deferred"
  | "busy"
  | "dry_run";

/** App-wide events, through the channel given to `subscribe`. */
export type AppEvent =
  | { "type": "file_changed"; path: string; version: string | null }
  | { "type": "files_changed" }
  | { "type": "index_status"; status: IndexStatus }
  | { "type": "memory_flushed"; path: string; bullets: number }
  | { "type": "consolidated"; result: ConsolidationResult }
  | { "type": "sessions_changed" }
  | { "type": "files_dropped"; added: Array<string>; refused: Array<Refused> }
  | { "type": "drag_over"; active: boolean }
  | { "type": "model_fetch"; package: string; done: number; total: number; finished: boolean }
  | { "type": "model_load"; progress: number | null };

export type Refused = { name: string; reason: string };

/** Where a change stands now. */
export type ChangeState = "applied" | "reverted" | "changed_since";

/**
 * A change with its texts (as text; bytes that are not UTF-8 are shown replaced) and its
 * state, as the app lists it.
 */
export type AgentChange = {
  before: string | null;
  after: string;
  state: ChangeState;
  id: string;
  session_id: string;
  run_id: string;
  call_id: string;
  tool: string;
  /** The file, relative to the workspace root. */
  path: string;
  /** Whether the file existed before the change. */
  existed: boolean;
  made_at: string;
  reverted_at: string | null;
};

/** One trashed file or folder. */
export type Trashed = {
  id: string;
  /** Where it was, relative to the workspace root. */
  path: string;
  dir: boolean;
  deleted_at: string;
};

/** What an import made. */
export type ImportReport = {
  /** "ChatGPT" or "Claude". */
  source: string;
  /** Conversations written as new sessions. */
  sessions: number;
  /** Conversations imported before and unchanged since, left as they are. */
  already: number;
};

/** See [`Agent::context_usage`]. */
export type ContextUsage = {
  /** Estimated tokens of the next request. */
  used: number;
  /** The context window. */
  window: number;
  /** Tokens kept free below the window; passing `window - reserve` compacts. */
  reserve: number;
};

/** A session whose text matches a search, with the best matching part. */
export type SessionHit = { id: string; snippet: string };

/** A configured provider as the settings show it. */
export type ProviderSettings = {
  name: string;
  /** A [`ProviderKind`]'s name (checked when saved). */
  kind: ProviderKind;
  base_url: string | null;
  model: string | null;
  /** The GGUF file (local provider). */
  model_path: string | null;
  context_window: number | null;
  /** Whether a key is stored for it (the key itself never reaches the page). */
  has_key: boolean;
};

/** Wire formats Cairn can speak. */
export type ProviderKind = "openai" | "anthropic" | "local" | "scripted";

/** A server found running on this machine. */
export type LocalServer = {
  kind: ServerKind;
  /** The OpenAI-compatible root, e.g. `http://127.0.0.1:11434/v1`. */
  base_url: string;
  models: Array<FoundModel>;
};

export type ServerKind = "ollama" | "lm_studio" | "llama_cpp" | "vllm";

/** A model a server offers, with the window it runs it with when the server says. */
export type FoundModel = { id: string; context_window: number | null };

/** The limits the dialog edits; `None`: the default. */
export type Limits = {
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
};

/** The settings as the page edits them. */
export type SettingsView = {
  default_provider: string | null;
  providers: Array<ProviderSettings>;
  models: PurposeModelsView;
  /** Where the bundled model is looked for (read-only in the page). */
  bundled_model_path: string;
  consolidation_interval_hours: number | null;
  /**
   * `[memory] embedder`: `"local"`, `"none"`, `"provider/model"`, or unset (the bundled
   * model when it is installed).
   */
  embedder: string | null;
  /** Whether the bundled embedding model is installed (read-only in the page). */
  bundled_embedder_installed: boolean;
  approval: ApprovalView;
  workspace: string | null;
  /**
   * `[memory] folders`: folders searched in place, as written (`~/Notes`). Read at
   * start: a change applies when the app starts again.
   */
  folders: Array<string>;
  path: string;
  /** Where API keys are kept (read-only in the page). */
  key_store: KeyStore;
  /** Limits of a run: `[run]`, `[timeouts]`, `[subagents]`. */
  limits: Limits;
  /** `[web] allow_private`: web_fetch may reach loopback and private addresses. */
  web_allow_private: boolean;
  /**
   * The user's hook commands (`[hooks]`), shown read-only: they are edited in
   * config.toml.
   */
  hooks: Array<HookView>;
};

export type PurposeModelsView = { memory_flush: string | null; consolidation: string | null; compaction: string | null };

export type ApprovalView = { default: Policy; tools: { [key in string]: Policy } };

/** Whether a tool call may run. */
export type Policy = "allow" | "ask" | "deny";

/** One hook command. */
export type HookView = { event: HookEvent; matcher: string | null; command: string; timeout_s: number | null };

/** When a hook runs (its table in config.toml: `[[hooks.pre_tool]]` ...). */
export type HookEvent = "pre_tool" | "post_tool" | "user_prompt" | "stop" | "session_start";

/** Where API keys are kept: the system keyring, or the key file where there is none. */
export type KeyStore = {
  kind: KeyStoreKind;
  /** The key file, when keys are kept in one. */
  path: string | null;
  /** One sentence saying where keys are kept and how they are protected. */
  description: string;
};

export type KeyStoreKind = "keyring" | "file";

export type ConnectionCheck = { ok: boolean; message: string; models: Array<string> };

/** Where a server stands. */
export type McpState = "stopped" | "starting" | "running" | "restarting" | "failed";

/** How Cairn reaches a server. */
export type McpTransport = "stdio" | "http";

/** A server's tool. */
export type McpToolInfo = {
  /** The name the model calls: `<server>__<tool>`. */
  name: string;
  /** Its name on the server. */
  server_name: string;
  description: string;
  /** `allow`, `ask` or `deny` (a policy's name). */
  approval: Policy;
};

/** One configured server. */
export type McpServerStatus = {
  name: string;
  transport: McpTransport;
  /** The command line or the URL. */
  endpoint: string;
  enabled: boolean;
  state: McpState;
  error?: string | null;
  /** Times it was started again after exiting. */
  restarts: number;
  /** Its tools as the model sees them (known once it has run). */
  tools: Array<McpToolInfo>;
};

/**
 * A server as the dialog's form gives it: a command line (split as a shell would) or a
 * URL.
 */
export type NewMcpServer = { name: string; command: string; url: string };
