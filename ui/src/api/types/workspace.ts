// Made from the Rust types that cross between cairn-desktop and the page; do not
// edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p
// cairn-desktop contract` writes it.

import type { Picture } from "./agent";

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

/** A picture file of the workspace, as its view shows it. */
export type WorkspacePicture = {
  path: string;
  /** The picture as a `data:` URL, at most 2048 pixels a side. */
  url: string;
  /** What its bytes are: `image/png`, `image/jpeg`, `image/webp` or `image/gif`. */
  media_type: string;
  width: number;
  height: number;
  /** Its size in bytes. */
  bytes: number;
  /** The text read in it (OCR), when there is any. */
  text: string | null;
};

/** Pictures picked in the system's dialog: those kept, and those refused with why. */
export type PickedPictures = { pictures: Array<Picture>; refused: Array<Refused> };

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
  /** The day a dated hit (a daily log, a session) is about, `YYYY-MM-DD`. */
  day: string | null;
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

/** What the user sees of the index (the app shows it as it is). */
export type IndexStatus = {
  files: number;
  chunks: number;
  /** Changes are waiting to be indexed. */
  catching_up: boolean;
  /** Another process writes the index; this one only reads it. */
  read_only: boolean;
  /** The last indexing error, if the last job failed. */
  last_error: string | null;
  /** The embedding model, when search by meaning is on. */
  embedding_model: string | null;
  /** Distinct chunks with a vector, of those in the index (`to_embed`). */
  embedded: number;
  to_embed: number;
  /** Why embedding stopped, if it did. */
  embed_error: string | null;
  /**
   * Folders searched in place that cannot be now, each with why (`~/Notes: it does
   * not exist`).
   */
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

/** A file whose text was read by OCR: `indexed (OCR)` in the Coverage view. */
export type OcrFile = {
  path: string;
  /** Pages read by OCR (a picture counts one). */
  pages: number;
  /** Its scanned pages left unread, and why, when some were. */
  unread: string | null;
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
  /** The files indexed with text read by OCR (pictures, scanned PDF pages). */
  ocr: Array<OcrFile>;
  /**
   * Scanned pages not read, one line per reason (`3 scanned pages not read: install
   * tesseract-ocr`).
   */
  unread_scans: Array<string>;
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
  | {
    "type": "files_dropped";
    added: Array<string>;
    pictures: Array<Picture>;
    refused: Array<Refused>;
  }
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
  /** A summary of the older conversation is being written in the background. */
  compacting: boolean;
  /**
   * What `used` rests on: the model's own tokenizer, the provider's count of the last
   * request (either corrects the estimate since), or an estimate alone.
   */
  counted_by: string;
};

/** A session whose text matches a search, with the best matching part. */
export type SessionHit = { id: string; snippet: string };
