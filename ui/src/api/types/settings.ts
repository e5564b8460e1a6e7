// Made from the Rust types that cross between cairn-desktop and the page; do not
// edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p
// cairn-desktop contract` writes it.

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
  /** Whether the model is sent pictures: `None` as the provider says, else yes or no. */
  vision: boolean | null;
  /** The longest side of a picture sent to it, in pixels; `None`: the default (1,568). */
  image_max_side: number | null;
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
   * `[memory] flush`: the flush after runs and consolidation write memory (`None`: yes,
   * unless the only model is a local one).
   */
  memory_flush: boolean | null;
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
  /** `[web] search` and `searxng_url`. */
  web_search: WebSearch;
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

/** Where web searches go, and what the page may know of the services' keys. */
export type WebSearch = {
  /** `[web] search`; `None`: no web search. */
  service: SearchBackend | null;
  /** `[web] searxng_url`: the user's SearXNG (needed with `searxng`). */
  searxng_url: string | null;
  /** The services whose key is in the key store (read-only). */
  stored_keys: Array<SearchBackend>;
  /**
   * The services whose key the environment gives (`BRAVE_API_KEY` ...), used before a
   * stored one (read-only).
   */
  env_keys: Array<SearchBackend>;
};

/** `[web] search`: where web searches go. */
export type SearchBackend = "brave" | "tavily" | "exa" | "searxng" | "provider";

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
