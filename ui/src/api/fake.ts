// An in-memory Backend for tests and for developing the page in a plain browser (npm run dev).
// Say "tool" in a prompt for a tool call that needs approval, "edit" for a file change
// that asks with its diff, "remember" for a memory flush,
// "compact" for a compaction and "fail" for a failed run.
import type { Backend, Listener } from "./backend";
import { appError } from "./errors";
import { FakeChanges } from "./fake/changes";
import { type FakeFolder, FakeFolders, readDocument, STARTER_DOCUMENTS, STARTER_FOLDERS } from "./fake/folders";
import { FakeMcp } from "./fake/mcp";
import { FakePictures, SAMPLE_PNG } from "./fake/pictures";
import { FakeRun, type RunHost } from "./fake/run";
import { FakeSession } from "./fake/sessions";
import { FakeWorkspace, isoDate, starterFiles } from "./fake/workspace";
import type { AppEvent, AppInfo, ConsolidationResult, DocumentPage, IndexStatus, PageMarks, Picture, ProviderSettings, RunEvent, SearchBackend, SettingsView } from "./types";

export interface FakeOptions {
  /** Milliseconds between streamed deltas (0 in tests). */
  delayMs?: number;
  files?: Record<string, string>;
  settings?: Partial<SettingsView>;
  now?: () => number;
  /** Folders searched in place (default: a `Notes` folder). */
  folders?: FakeFolder[];
  /** Documents' pages by path (their files are in `files`, any text). */
  documents?: Record<string, DocumentPage[]>;
}

export interface FakeBackend extends Backend {
  /** Changes a file as if something outside the app did (emits file_changed). */
  editOutside(path: string, text: string): void;
  /** Emits an app event to the subscribers. */
  emitApp(e: AppEvent): void;
  /** How many times ready() was called. */
  readyCalls(): number;
  /** The start-up marks the last ready() carried. */
  readyMarks(): PageMarks | null;
  /** The keys stored with setApiKey (never reachable through the Backend interface). */
  storedKeyCount(): number;
  /** The paths revealPath was asked to show. */
  revealed(): string[];
  /** How the next system file dialog ends: a file picked, or cancelled. */
  answerDialogs(answer: "pick" | "cancel"): void;
  /** The sessions exported so far, by id. */
  exported(): string[];
  /** Whether a file or folder is in the fake workspace. */
  exists(path: string): boolean;
  /** The documents openInViewer was asked to open. */
  viewed(): string[];
  /** How many times restartApp was called. */
  restarts(): number;
}

const BUNDLED = "SmolLM2-135M-Instruct";

export function createFakeBackend(opts: FakeOptions = {}): FakeBackend {
  const delayMs = opts.delayMs ?? 30;
  const now = opts.now ?? (() => Date.now());
  const documents = opts.documents ?? (opts.files ? {} : STARTER_DOCUMENTS);
  const ws = new FakeWorkspace(
    opts.files ?? {
      ...starterFiles(now()),
      ...Object.fromEntries(Object.keys(documents).map((p) => [p, "%PDF"])),
      "knowledge/garden-sketch.png": `data:image/png;base64,${SAMPLE_PNG}`,
    },
  );
  const pictures = new FakePictures();
  const folders = new FakeFolders(opts.folders ?? (opts.files ? [] : STARTER_FOLDERS));
  const viewed: string[] = [];
  let restarts = 0;
  const listeners: Listener<AppEvent>[] = [];
  const sessions = new Map<string, FakeSession>();
  const keys = new Map<string, string>();
  /** The search services whose key is stored, as the backend lists them. */
  const searchKeys = (): SearchBackend[] => (["brave", "tavily", "exa"] as const).filter((k) => keys.has(k));
  const mcp = new FakeMcp();
  let current: FakeSession | null = null;
  let run: FakeRun | null = null;
  /** The run's events so far and the page following them (attachRun replaces it). */
  let feed: { log: RunEvent[]; listener: Listener<RunEvent>; session: FakeSession; known: number } | null = null;
  let readyCalls = 0;
  let readyMarks: PageMarks | null = null;
  /** Paths shown in the file manager (revealPath). */
  const revealed: string[] = [];
  let dialog: "pick" | "cancel" = "pick";
  const exported: string[] = [];
  let sessionCounter = 0;
  let lastConsolidation: number | null = now() - 5 * 3_600_000;
  let settings: SettingsView = {
    default_provider: null,
    providers: [
      { name: "openrouter", kind: "openai", base_url: "https://openrouter.ai/api/v1", model: null, model_path: null, context_window: null, vision: null, image_max_side: null, has_key: false },
    ],
    models: { memory_flush: null, consolidation: null, compaction: null },
    bundled_model_path: "/usr/share/cairn/models/SmolLM2-135M-Instruct-Q4_1.gguf",
    consolidation_interval_hours: 6,
    memory_flush: null,
    embedder: null,
    bundled_embedder_installed: true,
    limits: {
      max_steps: null,
      deadline_s: null,
      strict: false,
      chat_timeout_s: null,
      memory_flush_timeout_s: null,
      compaction_timeout_s: null,
      consolidation_timeout_s: null,
      subagents_timeout_s: null,
      subagent_max_depth: null,
    },
    approval: { default: "ask", tools: { memory_search: "allow", bash: "ask" } },
    workspace: null,
    folders: opts.files ? [] : ["~/Notes"],
    path: "~/.config/cairn/config.toml",
    web_allow_private: false,
    web_search: { service: null, searxng_url: null, stored_keys: [], env_keys: [] },
    hooks: [{ event: "pre_tool", matcher: "bash", command: "~/.config/cairn/hooks/no-rm.sh", timeout_s: 10 }],
    key_store: { kind: "keyring", path: null, description: "Keys are kept in the system keyring" },
    ...opts.settings,
  };

  const delay = (factor = 1) => new Promise<void>((r) => setTimeout(r, delayMs * factor));
  const emitApp = (e: AppEvent) => listeners.forEach((l) => l(e));
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const status = (): IndexStatus => ({ files: ws.paths().length, chunks: ws.chunks().length, catching_up: false, read_only: false, last_error: null, embedding_model: null, embedded: 0, to_embed: 0, embed_error: null, folders_unavailable: [] });
  const changes = new FakeChanges(ws);
  const host: RunHost = { delay, now, workspace: ws, changes, emitApp, alwaysAllowed: new Set<string>(), followUpMode: "all" };

  const info = (): AppInfo => {
    const p = settings.providers.find((x) => x.name === settings.default_provider);
    return {
      version: "0.1.0-preview",
      workspace: settings.workspace ?? "~/Cairn",
      provider: p ? p.name : "local",
      model: p ? (p.model ?? "(default model)") : BUNDLED,
      bundled_model: !p,
      tools: true,
      notices: [],
      follow_up_mode: host.followUpMode,
      memory_paused: p
        ? null
        : `memory consolidation and the memory flush are paused: the only model is the local \`${BUNDLED}\`, and a small local model would damage MEMORY.md. Configure a provider (an OpenAI-compatible server or Anthropic), or set \`[memory] flush = true\` to let the local model write memory anyway`,
    };
  };

  const session = (): FakeSession => {
    if (!current) throw appError("not_found", "no session is open");
    return current;
  };

  const newSession = (): FakeSession => {
    sessionCounter += 1;
    const s = new FakeSession(`s${sessionCounter}-${now().toString(36)}`, now());
    sessions.set(s.id, s);
    return s;
  };

  const startRun = async (parent: string | null, text: string, listener: Listener<RunEvent>, attached: Picture[] = []) => {
    if (run) throw appError("busy", "a run is going on");
    if (!text.trim() && attached.length === 0) throw appError("invalid", "empty message");
    attached.forEach((p) => pictures.thumbnail(p));
    const s = session();
    const f = { log: [] as RunEvent[], listener, session: s, known: s.added };
    const r = new FakeRun(host, s, (e) => {
      f.log.push(e);
      f.listener(e);
    });
    run = r;
    feed = f;
    try {
      await r.play(parent, text, attached);
    } finally {
      run = null;
      feed = null;
      emitApp({ type: "sessions_changed" });
      emitApp({ type: "index_status", status: status() });
    }
  };

  const backend: FakeBackend = {
    appInfo: async () => info(),
    firstScreen: async () => {
      const list = await backend.listSessions();
      // As the shell: no session while a run goes on (the page attaches to it instead).
      const session = run ? null : await backend.openSession(list[0]?.id ?? null);
      return { info: info(), sessions: list, session, index: status() };
    },
    openLink: async (url) => {
      window.open(url, "_blank", "noopener,noreferrer");
    },
    ready: async (marks) => {
      readyCalls += 1;
      readyMarks = marks;
    },
    subscribe: async (listener) => {
      listeners.push(listener);
    },

    listSessions: async () =>
      [...sessions.values()].filter((s) => s.size > 0).map((s) => s.summary()).sort((a, b) => b.updated_ms - a.updated_ms),
    openSession: async (id) => {
      if (run && id !== current?.id) throw appError("busy", "a run is going on");
      const s = id === null ? newSession() : sessions.get(id);
      if (!s) throw appError("not_found", `no session ${id}`);
      current = s;
      return s.view(run !== null);
    },
    renameSession: async (id, title) => {
      const s = sessions.get(id);
      if (!s) throw appError("not_found", `no session ${id}`);
      if (!title.trim()) throw appError("invalid", "the title is empty");
      s.title = title.trim();
      emitApp({ type: "sessions_changed" });
    },
    contextUsage: async () => {
      if (!current || current.size === 0) return null;
      const items = current.view(false).items;
      const lastSummary = items.map((i) => i.kind).lastIndexOf("summary");
      const since = items.length - lastSummary - 1;
      return { used: 600 + 1_400 * since, window: 8_192, reserve: 1_024, compacting: false, counted_by: "an estimate (about four characters a token)" };
    },
    slashCommands: async () => {
      const field = (text: string, key: string) => text.match(new RegExp(`^${key}:\\s*(.*)$`, "m"))?.[1]?.trim() ?? "";
      const prompts = ws
        .paths()
        .filter((p) => /^prompts\/[a-z0-9_-]+\.md$/.test(p))
        .map((p) => {
          const name = p.slice("prompts/".length, -3);
          const text = ws.text(p);
          const args = field(text, "arguments").replace(/[[\]]/g, "").split(",").map((a) => a.trim()).filter(Boolean);
          return { name, kind: "prompt", description: field(text, "description"), usage: [`/${name}`, ...args.map((a) => `<${a}>`)].join(" ") };
        });
      const skills = ws
        .paths()
        .filter((p) => /^skills\/[a-z0-9_-]+\/SKILL\.md$/.test(p))
        .map((p) => p.split("/")[1] ?? "")
        .filter((name) => !prompts.some((t) => t.name === name))
        .map((name) => ({ name, kind: "skill", description: field(ws.text(`skills/${name}/SKILL.md`), "description"), usage: `/${name}` }));
      return [...prompts, ...skills].sort((a, b) => a.name.localeCompare(b.name));
    },
    compactNow: async (focus) => {
      if (run) throw appError("busy", "a run is going on");
      const s = session();
      if (s.size < 2) throw appError("invalid", "cannot compact: there is nothing before the recent messages to summarise");
      s.add(s.leaf, { kind: "summary", text: `Earlier: the conversation so far${focus ? `, with a focus on ${focus}` : ""}.`, what: "compaction" }, now());
      return s.view(false);
    },
    exportSession: async (id) => {
      const s = sessions.get(id);
      if (!s) throw appError("not_found", `no session ${id}`);
      if (dialog === "cancel") return null;
      exported.push(id);
      return `/home/ada/${s.title ?? id}.md`;
    },
    pickModelFile: async () => (dialog === "cancel" ? null : "/home/ada/models/qwen2.5-0.5b-instruct-q4_k_m.gguf"),
    importConversations: async () => {
      if (dialog === "cancel") return null;
      const s = newSession();
      s.title = "Imported: tea";
      const asked = s.add(null, { kind: "user", text: "Green or black tea?" }, now());
      s.add(asked, { kind: "assistant", text: "Green, in the morning.", tool_calls: [], stop: "end_turn" }, now());
      emitApp({ type: "sessions_changed" });
      return { source: "ChatGPT", sessions: 1, already: 0 };
    },
    deleteSession: async (id) => {
      if (run && current?.id === id) throw appError("busy", "a run is going on");
      if (!sessions.delete(id)) throw appError("not_found", `no session ${id}`);
      if (current?.id === id) current = null;
      emitApp({ type: "sessions_changed" });
    },
    setThinking: async (level) => {
      session().thinking = level;
    },
    chooseModel: async (provider, model) => {
      const p = settings.providers.find((x) => x.name === provider);
      if (!p) throw appError("invalid", `no provider \`${provider}\` is configured`);
      return model ?? p.model ?? "(default model)";
    },
    switchBranch: async (entryId, summarize = false) => {
      if (run) throw appError("busy", "a run is going on");
      const s = session();
      const left = s.view(false).items.filter((i) => i.kind === "user").length;
      s.leaf = s.newestLeaf(entryId);
      if (summarize && left > 0) {
        await delay(2);
        s.leaf = s.add(s.leaf, { kind: "summary", text: "On the version left behind: the first approach was tried and set aside.", what: "branch" }, now());
      }
      return s.view(false);
    },

    sendMessage: (text, listener, attached) => startRun(current?.leaf ?? null, text, listener, attached),
    resumeRun: async () => {
      throw appError("invalid", "this session has no interrupted run to go on with");
    },
    attachPicture: async (name, data) => {
      await delay(1);
      return pictures.attach(name, data);
    },
    pickPictures: async () => (dialog === "cancel" ? { pictures: [], refused: [] } : { pictures: [pictures.attach("hills.png", SAMPLE_PNG)], refused: [] }),
    pictureThumbnail: async (picture) => pictures.thumbnail(picture),
    attachRun: async (listener) => {
      if (!feed) return null;
      feed.log.forEach(listener);
      feed.listener = listener;
      current = feed.session;
      return feed.session.view(true, feed.known);
    },
    steer: async (text) => {
      if (!run) throw appError("invalid", "no run is going on");
      run.steer(text);
    },
    followUp: async (text) => {
      if (!run) throw appError("invalid", "nothing is running to follow up; send it instead");
      run.followUp(text);
    },
    takeFollowUp: async (index) => run?.takeFollowUp(index) ?? null,
    setFollowUpMode: async (mode) => {
      host.followUpMode = mode;
    },
    abort: async () => {
      run?.abort();
    },
    resolveApproval: async (requestId, decision) => {
      if (!run || !run.resolve(requestId, decision)) throw appError("not_found", `no approval ${requestId}`);
    },
    editMessage: async (entryId, text, listener) => {
      const s = session();
      const body = s.body(entryId);
      if (body.kind !== "user") throw appError("invalid", "not a user message");
      await startRun(s.parentOf(entryId), text, listener, body.pictures);
    },
    retry: async (entryId, listener) => {
      const s = session();
      const body = s.body(entryId);
      if (body.kind !== "user") throw appError("invalid", "not a user message");
      await startRun(s.parentOf(entryId), body.text, listener, body.pictures);
    },

    listFiles: async () => ws.tree(),
    readFile: async (path) => (folders.owns(path) ? folders.read(path) : ws.read(path)),
    writeFile: async (path, text, baseVersion) => {
      folders.refuseWrite(path);
      const created = !ws.has(path);
      const saved = ws.write(path, text, baseVersion);
      emitApp({ type: "file_changed", path, version: saved.version });
      if (created) emitApp({ type: "files_changed" });
      emitApp({ type: "index_status", status: status() });
      return saved;
    },

    createFile: async (path) => {
      folders.refuseWrite(path);
      const saved = ws.createFile(path);
      emitApp({ type: "files_changed" });
      return saved;
    },
    createFolder: async (path) => {
      folders.refuseWrite(path);
      ws.createFolder(path);
      emitApp({ type: "files_changed" });
    },
    movePath: async (from, to) => {
      folders.refuseWrite(from, to);
      ws.move(from, to);
      emitApp({ type: "files_changed" });
    },
    trashPath: async (path) => {
      folders.refuseWrite(path);
      const item = ws.trashPath(path, now());
      emitApp({ type: "files_changed" });
      emitApp({ type: "file_changed", path, version: null });
      return item;
    },
    listTrash: async () => ws.trashed(),
    restoreTrash: async (id) => {
      const item = ws.restore(id);
      emitApp({ type: "files_changed" });
      return item;
    },
    discoverLocalServers: async () => {
      await delay(2);
      return [
        {
          kind: "ollama",
          base_url: "http://127.0.0.1:11434/v1",
          models: [
            { id: "llama3.2:latest", context_window: 8192 },
            { id: "qwen3:4b", context_window: 4096 },
          ],
        },
      ];
    },
    listChanges: async (sessionId) => clone(changes.list(sessionId)),
    revertChanges: async (sessionId, ids) => {
      const path = changes.revert(sessionId, ids, now());
      emitApp({ type: "files_changed" });
      emitApp({ type: "file_changed", path, version: ws.has(path) ? ws.read(path).version : null });
      return path;
    },
    revealPath: async (path) => {
      revealed.push(path);
    },
    listFolders: async () => folders.list(),
    readDocument: async (path) => {
      await delay(1);
      return readDocument(documents, path);
    },
    readPicture: async (path) => {
      await delay(1);
      return pictures.read(path, ws.read(path).text);
    },
    openInViewer: async (path) => {
      readDocument(documents, path);
      viewed.push(path);
    },
    pickFolder: async () => (dialog === "cancel" ? null : "/home/ada/Papers"),
    restartApp: async () => {
      if (run) throw appError("busy", "a run is going on; wait for it or stop it first");
      restarts += 1;
    },

    memorySearch: async (query, limit) => ws.search(query, limit),
    searchSessions: async (query) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      return [...sessions.values()].flatMap((s) => {
        const texts = s.view(false).items.map((i) => ("text" in i ? i.text : ""));
        const hit = texts.find((t) => words.every((w) => t.toLowerCase().includes(w)));
        return hit ? [{ id: s.id, snippet: hit.slice(0, 120) }] : [];
      });
    },
    indexStatus: async () => status(),
    indexCoverage: async () => {
      const paths = ws.paths();
      const left_out = paths
        .filter((p) => !/\.(md|markdown|txt|png|jpe?g|webp|tiff?)$/i.test(p))
        .map((path) => ({ path, status: "skipped", folder: false, reason: `unsupported type (.${path.split(".").pop()})` }));
      return {
        indexed: paths.length - left_out.length,
        skipped: left_out.length,
        failed: 0,
        pending: 0,
        chunks: ws.chunks().length,
        embedded: 0,
        left_out,
        ocr: paths
          .filter((p) => /\.(png|jpe?g|webp|tiff?)$/i.test(p))
          .map((path) => ({ path, pages: 1, unread: null })),
        unread_scans: [],
      };
    },
    memoryOverview: async () => {
      const today_path = `memory/${isoDate(now())}.md`;
      const hours = settings.consolidation_interval_hours ?? 6;
      return {
        today_path,
        today_text: ws.has(today_path) ? ws.text(today_path) : "",
        last_consolidation_ms: lastConsolidation,
        next_consolidation_ms: hours > 0 ? (lastConsolidation ?? now()) + hours * 3_600_000 : null,
        consolidation_enabled: hours > 0 && settings.memory_flush !== false,
      };
    },
    consolidateNow: async () => {
      await delay(20);
      const old = ws.text("MEMORY.md");
      const backup = `memory/archive/MEMORY-${isoDate(now())}-${now() % 100000}.md`;
      ws.put(backup, old);
      const version = ws.put("MEMORY.md", `${old.trimEnd()}\n- Watering: every other day, deep (merged from the daily logs).\n`);
      lastConsolidation = now();
      const result: ConsolidationResult = { status: "written", message: "Merged the daily logs into MEMORY.md.", added: 1, removed: 0, backup };
      emitApp({ type: "files_changed" });
      emitApp({ type: "file_changed", path: "MEMORY.md", version });
      emitApp({ type: "consolidated", result });
      emitApp({ type: "index_status", status: status() });
      return result;
    },

    getSettings: async () => clone(settings),
    saveSettings: async (next) => {
      const names = next.providers.map((p) => p.name.trim());
      if (names.some((n) => !n)) throw appError("invalid", "every provider needs a name");
      if (new Set(names).size !== names.length) throw appError("invalid", "two providers have the same name");
      if (next.default_provider && !names.includes(next.default_provider)) throw appError("invalid", "the default provider does not exist");
      const [via, model] = (next.embedder ?? "").split("/", 2);
      if (model !== undefined) {
        if (!names.includes(via?.trim() ?? "")) throw appError("invalid", `search by meaning names the provider \`${via}\`, which is not set up`);
        if (!model.trim()) throw appError("invalid", "search by meaning through a provider needs the embedding model's name");
      }
      const searxng = next.web_search.searxng_url?.trim() ?? "";
      if (next.web_search.service === "searxng" && !/^https?:\/\/[^/\s]+/.test(searxng)) throw appError("invalid", `the SearXNG address \`${searxng}\` is not a web address`);
      const side = next.providers.find((p) => p.vision !== false && p.image_max_side !== null && (p.image_max_side < 64 || p.image_max_side > 8192));
      if (side) throw appError("invalid", `the largest picture side of \`${side.name}\` must be from 64 to 8192`);
      settings = clone({ ...next, providers: next.providers.map((p) => ({ ...p, has_key: keys.has(p.name) })), web_search: { ...next.web_search, stored_keys: searchKeys() } });
      return info();
    },
    setApiKey: async (provider, key) => {
      if (key === null) keys.delete(provider);
      else if (!key.trim()) throw appError("invalid", "the key is empty");
      else keys.set(provider, key);
      settings.providers = settings.providers.map((p) => (p.name === provider ? { ...p, has_key: keys.has(provider) } : p));
      settings.web_search.stored_keys = searchKeys();
    },
    checkProvider: async (p: ProviderSettings, key) => {
      await delay(5);
      if (p.kind === "local") return { ok: true, message: "The local model loads.", models: [BUNDLED] };
      if (p.kind === "openai" && !p.base_url) return { ok: false, message: "A base URL is needed.", models: [] };
      if (!key && !keys.has(p.name)) return { ok: false, message: "No API key: the provider answered 401.", models: [] };
      const models = p.kind === "anthropic" ? ["claude-sonnet-4-5", "claude-haiku-4-5"] : ["gpt-4.1-mini", "gpt-4.1", "o4-mini"];
      return { ok: true, message: `Connected: ${models.length} models.`, models };
    },
    mcpServers: async (start) => {
      await delay(5);
      return mcp.list(start);
    },
    addMcpServer: async (server) => mcp.add(server),
    setMcpServerEnabled: async (name, enabled) => mcp.setEnabled(name, enabled),
    removeMcpServer: async (name) => mcp.remove(name),

    editOutside: (path, text) => {
      const created = !ws.has(path);
      const version = ws.put(path, text);
      emitApp({ type: "file_changed", path, version });
      if (created) emitApp({ type: "files_changed" });
      emitApp({ type: "index_status", status: status() });
    },
    emitApp,
    readyCalls: () => readyCalls,
    readyMarks: () => readyMarks,
    revealed: () => [...revealed],
    answerDialogs: (answer) => {
      dialog = answer;
    },
    exported: () => [...exported],
    exists: (path) => ws.exists(path),
    viewed: () => [...viewed],
    restarts: () => restarts,
    storedKeyCount: () => keys.size,
  };
  return backend;
}
