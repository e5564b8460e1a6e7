// The Backend over Tauri commands. Command names are those of src-tauri's command list
// (commands.ts is made from it, so a name the shell does not register does not compile);
// argument names are those of src-tauri/src/commands (snake_case).
import { Channel, invoke as invokeAny, type InvokeArgs } from "@tauri-apps/api/core";
import type { Backend, Listener } from "./backend";
import type { Command } from "./commands";
import type { AppEvent, RunEvent } from "./types";

const invoke = <T>(command: Command, args?: InvokeArgs): Promise<T> => invokeAny<T>(command, args);

function channel<T>(listener: Listener<T>): Channel<T> {
  const ch = new Channel<T>();
  ch.onmessage = listener;
  return ch;
}

export const tauriBackend: Backend = {
  appInfo: () => invoke("app_info"),
  firstScreen: () => invoke("first_screen"),
  ready: (marks) => invoke("ui_ready", { marks }),
  openLink: (url) => invoke("open_link", { url }),
  subscribe: (listener) => invoke("subscribe", { on_event: channel<AppEvent>(listener) }),

  listSessions: () => invoke("list_sessions"),
  openSession: (id) => invoke("open_session", { id }),
  renameSession: (id, title) => invoke("rename_session", { id, title }),
  deleteSession: (id) => invoke("delete_session", { id }),
  chooseModel: (provider, model) => invoke("choose_model", { provider, model }),
  setThinking: (level) => invoke("set_thinking", { level }),
  switchBranch: (entryId, summarize = false) => invoke("switch_branch", { entry_id: entryId, summarize }),

  sendMessage: (text, listener, pictures) =>
    invoke("send_message", { text, ...(pictures?.length ? { pictures } : {}), on_event: channel<RunEvent>(listener) }),
  resumeRun: (listener) => invoke("resume_run", { on_event: channel<RunEvent>(listener) }),
  attachPicture: (name, data) => invoke("attach_picture", { name, data }),
  pickPictures: () => invoke("pick_pictures"),
  pictureThumbnail: (picture, side) => invoke("picture_thumbnail", { picture, side }),
  attachRun: (listener) => invoke("attach_run", { on_event: channel<RunEvent>(listener) }),
  steer: (text) => invoke("steer", { text }),
  followUp: (text) => invoke("follow_up", { text }),
  takeFollowUp: (index) => invoke("take_follow_up", { index }),
  setFollowUpMode: (mode) => invoke("set_follow_up_mode", { mode }),
  abort: () => invoke("abort"),
  resolveApproval: (requestId, decision) =>
    invoke("resolve_approval", { request_id: requestId, decision }),
  editMessage: (entryId, text, listener) =>
    invoke("edit_message", { entry_id: entryId, text, on_event: channel<RunEvent>(listener) }),
  retry: (entryId, listener) =>
    invoke("retry", { entry_id: entryId, on_event: channel<RunEvent>(listener) }),

  contextUsage: () => invoke("context_usage"),
  compactNow: (focus) => invoke("compact_now", { focus }),
  slashCommands: () => invoke("slash_commands"),
  exportSession: (id) => invoke("export_session", { id }),
  importConversations: () => invoke("import_conversations"),
  pickModelFile: () => invoke("pick_model_file"),

  listFiles: () => invoke("list_files"),
  readFile: (path) => invoke("read_file", { path }),
  writeFile: (path, text, baseVersion) =>
    invoke("write_file", { path, text, base_version: baseVersion }),
  createFile: (path) => invoke("create_file", { path }),
  createFolder: (path) => invoke("create_folder", { path }),
  movePath: (from, to) => invoke("move_path", { from, to }),
  trashPath: (path) => invoke("trash_path", { path }),
  listTrash: () => invoke("list_trash"),
  restoreTrash: (id) => invoke("restore_trash", { id }),
  discoverLocalServers: () => invoke("discover_local_servers"),
  listChanges: (sessionId) => invoke("list_changes", { session_id: sessionId }),
  revertChanges: (sessionId, ids) => invoke("revert_changes", { session_id: sessionId, ids }),
  revealPath: (path) => invoke("reveal_path", { path }),
  listFolders: () => invoke("list_folders"),
  readDocument: (path) => invoke("read_document", { path }),
  readPicture: (path) => invoke("read_picture", { path }),
  openInViewer: (path) => invoke("open_in_viewer", { path }),
  pickFolder: () => invoke("pick_folder"),
  restartApp: () => invoke("restart_app"),

  memorySearch: (query, limit) => invoke("memory_search", { query, limit }),
  searchSessions: (query) => invoke("search_sessions", { query }),
  indexStatus: () => invoke("index_status"),
  memoryOverview: () => invoke("memory_overview"),
  indexCoverage: () => invoke("index_coverage"),
  consolidateNow: () => invoke("consolidate_now"),

  getSettings: () => invoke("get_settings"),
  saveSettings: (settings) => invoke("save_settings", { settings }),
  setApiKey: (provider, key) => invoke("set_api_key", { provider, key }),
  checkProvider: (provider, key) => invoke("check_provider", { provider, key }),

  mcpServers: (start) => invoke("mcp_servers", { start }),
  addMcpServer: (server) => invoke("add_mcp_server", { server }),
  setMcpServerEnabled: (name, enabled) => invoke("set_mcp_server_enabled", { name, enabled }),
  removeMcpServer: (name) => invoke("remove_mcp_server", { name }),
};
