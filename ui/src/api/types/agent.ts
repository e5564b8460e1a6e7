// Made from the Rust types that cross between cairn-desktop and the page; do not
// edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p
// cairn-desktop contract` writes it.

import type { IndexStatus } from "./workspace";

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
  /** How queued follow-ups are delivered (`[run] follow_up_mode`). */
  follow_up_mode: QueueMode;
};

/**
 * What the first screen shows, in one call the page makes before its first render:
 * the app, the sessions and the open one, the index's state.
 */
export type FirstScreen = {
  info: AppInfo;
  sessions: Array<SessionSummary>;
  /**
   * The newest session, opened as choosing it in the list opens it (a new one when
   * there is none). None while a run goes on (the page was loaded again): the page
   * then attaches to the run and opens its session.
   */
  session: SessionView | null;
  index: IndexStatus | null;
};

/**
 * When the page's start-up steps came, as it measured them: `performance.now()` at each
 * (milliseconds since its navigation began) and `performance.timeOrigin` (when that was,
 * in milliseconds since the epoch).
 */
export type PageMarks = { origin: number; marks: StartSteps };

/** The page's start-up steps, each when it was first reached. */
export type StartSteps = {
  /** The bundle, parsed, began to run. */
  script?: number;
  /** Every module of the bundle had run. */
  evaluated?: number;
  /** The first render was committed. */
  rendered?: number;
  /**
   * What the first screen shows had arrived (before the first render when the page
   * could ask for it all at once; after it while a run goes on).
   */
  booted?: number;
  /** The frame that shows it. */
  frame?: number;
};

/**
 * One entry of the composer's `/` menu: a prompt template (`prompts/<name>.md`, expanded
 * into the message) or a skill (its instructions join the prompt).
 */
export type SlashCommand = {
  name: string;
  /** `prompt` or `skill`. */
  kind: string;
  description: string;
  /** How it is called: `/review <file> <focus>`. */
  usage: string;
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
  | {
    "kind": "user";
    entry_id: string;
    text: string;
    /** The pictures sent with it, in order. */
    pictures: Array<Picture>;
    siblings: BranchSiblings | null;
  }
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

export type ToolResultView = {
  content: string;
  is_error: boolean;
  /** Pictures the tool gave (`read_file` on a picture). */
  pictures: Array<Picture>;
};

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
  /** How the run that ended at the active leaf went, shown under the last message. */
  last_run: LastRun | null;
  /** The conversation's thinking level (`None`: as the provider's settings say). */
  thinking: ThinkingLevel | null;
  /**
   * A run of this session was cut short (a crash, a kill, a closed window) and can go
   * on from its last checkpoint.
   */
  interrupted: InterruptedRun | null;
};

/** How a session's last run ended, as kept in the session. */
export type LastRun = {
  outcome: Outcome;
  /** Model calls made. */
  steps: number;
  duration_ms: number;
  /** In a few words: "stopped by you after 7 steps", "failed after 1 step: …". */
  said: string;
};

/** A run cut short, as the bar above the message box offers it. */
export type InterruptedRun = {
  /** The request it answers. */
  message: string;
  /** Model calls it made. */
  steps: number;
  /** Follow-ups queued in it, delivered when it goes on. */
  queued: Array<string>;
};

/** The answer to an approval request. */
export type ApprovalDecision = "allow_once" | "allow_always" | "deny";

/** How loud a notice is. */
export type NoticeLevel = "info" | "warning" | "error";

/** What the harness is doing. Structural operations need `Idle`. */
export type Phase = "idle" | "turn" | "compaction" | "branch_summary" | "retry";

/** How a queue (steering, follow-ups) is delivered at a save point. */
export type QueueMode = "all" | "one-at-a-time";

/**
 * How much the model reasons before it answers. `Off` sends no reasoning request at
 * all; the others map to what the provider takes (a budget of thinking tokens, a
 * reasoning effort, a template's switch).
 */
export type ThinkingLevel = "off" | "low" | "medium" | "high";

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
export type ToolResultMessage = {
  call_id: string;
  tool_name: string;
  content: string;
  is_error: boolean;
  /** Pictures the tool gave (`read_file` on a picture). */
  pictures?: Array<Picture>;
};

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
  }
  | { "type": "image" } & Picture;

/**
 * A picture in a conversation. Its bytes are kept once in the workspace by content hash
 * (`.cairn/attachments/<sha256>.<ext>`); a message records what it is, never the bytes.
 */
export type Picture = {
  /** The SHA-256 of its bytes, in lowercase hex: its name in the attachments folder. */
  sha256: string;
  /** `image/png`, `image/jpeg`, `image/webp` or `image/gif`, from its bytes. */
  media_type: string;
  /** Its size in bytes. */
  bytes: number;
  width: number;
  height: number;
  /** The name it had (a file's name), when it had one. */
  name?: string | null;
  /** The text read in it (OCR), when there is any. */
  text?: string | null;
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
  | {
    "type": "tool_end";
    call_id: string;
    name: string;
    content: string;
    is_error: boolean;
    /** Pictures the tool gave (`read_file` on a picture), shown on its card. */
    pictures: Array<Picture>;
  }
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
  | {
    "type": "compaction_start";
    reason: string;
    /** The summary is written while the run goes on, and swapped in when ready. */
    background: boolean;
  }
  | { "type": "compaction_end"; tokens_before: number; tokens_after: number }
  | { "type": "memory_flushed"; path: string; bullets: number }
  | { "type": "work_items"; items: Array<WorkItem> }
  | { "type": "retry"; attempt: number; delay_ms: number; reason: string }
  | {
    "type": "subagent";
    task_id: string;
    agent: string;
    call_id: string;
    /**
     * `provider/model` the subagent runs on (its parent's model when neither the
     * call nor its definition named one).
     */
    model_used?: string | null;
    event: RunEvent;
  }
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
export type WorkItem = {
  id: string;
  text: string;
  status: WorkStatus;
  note?: string | null;
  /** How much it matters, when the model said. */
  priority?: WorkPriority | null;
  /** The workspace path the item produced; it must exist when the work is completed. */
  artifact?: string | null;
};

/** How much a work item matters. */
export type WorkPriority = "high" | "medium" | "low";
