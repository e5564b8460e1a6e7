import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, describe, expect, it } from "vitest";
import { tauriBackend } from "../api/tauri";
import { limitContextMenu, wantsMenu } from "../lib/contextMenu";
import type { RunEvent } from "../api/types";

interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

/** Sends `message` to a Channel passed to a mocked command, as the shell does. */
function sendToChannel(channel: unknown, index: number, message: unknown) {
  const id = (channel as { id: number }).id;
  const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback(id: number, data: unknown): void } }).__TAURI_INTERNALS__;
  internals.runCallback(id, { index, message });
}

afterEach(() => clearMocks());

describe("tauriBackend over mocked IPC", () => {
  it("calls the commands by name with snake_case arguments", async () => {
    const calls: Call[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
      if (cmd === "write_file") return { path: "a.md", version: "v2" };
      if (cmd === "memory_search") return { hits: [], stale: false, took_ms: 1 };
      return null;
    });
    await tauriBackend.switchBranch("e7");
    await tauriBackend.resolveApproval("r1", "allow_always");
    await expect(tauriBackend.writeFile("a.md", "text", "v1")).resolves.toEqual({ path: "a.md", version: "v2" });
    await tauriBackend.writeFile("a.md", "text", null);
    await tauriBackend.memorySearch("garden", 20);
    await tauriBackend.renameSession("s1", "Title");
    await tauriBackend.setApiKey("openrouter", null);
    await tauriBackend.openSession(null);
    await tauriBackend.ready({ origin: 1700000000000, marks: { script: 80, frame: 300 } });
    expect(calls).toEqual([
      { cmd: "switch_branch", args: { entry_id: "e7", summarize: false } },
      { cmd: "resolve_approval", args: { request_id: "r1", decision: "allow_always" } },
      { cmd: "write_file", args: { path: "a.md", text: "text", base_version: "v1" } },
      { cmd: "write_file", args: { path: "a.md", text: "text", base_version: null } },
      { cmd: "memory_search", args: { query: "garden", limit: 20 } },
      { cmd: "rename_session", args: { id: "s1", title: "Title" } },
      { cmd: "set_api_key", args: { provider: "openrouter", key: null } },
      { cmd: "open_session", args: { id: null } },
      { cmd: "ui_ready", args: { marks: { origin: 1700000000000, marks: { script: 80, frame: 300 } } } },
    ]);
  });

  it("streams run events from a Channel given to send_message", async () => {
    const events: RunEvent[] = [
      { type: "agent_start", run_id: "r1", session_id: "s1" },
      { type: "message_delta", text: "Hi" },
      { type: "agent_end", outcome: { kind: "completed" }, summary: { steps: 1, tool_calls: 0, input_tokens: 3, output_tokens: 1, duration_ms: 5 }, session_id: "s1" },
    ];
    let seen: Record<string, unknown> = {};
    mockIPC((cmd, args) => {
      if (cmd !== "send_message") throw new Error(`unexpected ${cmd}`);
      seen = args as Record<string, unknown>;
      // Deliver out of order: the Channel puts them back in order by index.
      sendToChannel(seen.on_event, 1, events[1]);
      sendToChannel(seen.on_event, 0, events[0]);
      sendToChannel(seen.on_event, 2, events[2]);
      return null;
    });
    const got: RunEvent[] = [];
    await tauriBackend.sendMessage("hello", (e) => got.push(e));
    expect(seen.text).toBe("hello");
    expect(Object.keys(seen).sort()).toEqual(["on_event", "text"]);
    expect(got).toEqual(events);
  });

  it("passes edit_message and retry their entry id and a channel", async () => {
    const calls: Call[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args: args as Record<string, unknown> });
      return null;
    });
    await tauriBackend.editMessage("e3", "new text", () => undefined);
    await tauriBackend.retry("e4", () => undefined);
    expect(calls.map((c) => [c.cmd, Object.keys(c.args).sort()])).toEqual([
      ["edit_message", ["entry_id", "on_event", "text"]],
      ["retry", ["entry_id", "on_event"]],
    ]);
    expect(calls[0]?.args.entry_id).toBe("e3");
  });

  it("takes up a run with attach_run: events through its channel, the view as the answer", async () => {
    let channel: unknown;
    mockIPC((cmd, args) => {
      if (cmd !== "attach_run") throw new Error(`unexpected ${cmd}`);
      channel = (args as { on_event: unknown }).on_event;
      sendToChannel(channel, 0, { type: "agent_start", run_id: "r1", session_id: "s1" });
      return { id: "s1", title: null, items: [], leaf: null, branches: 0, running: true, last_run: null };
    });
    const got: RunEvent[] = [];
    const view = await tauriBackend.attachRun((e) => got.push(e));
    expect(view?.running).toBe(true);
    expect(got).toEqual([{ type: "agent_start", run_id: "r1", session_id: "s1" }]);
  });

  it("subscribes app events through a channel", async () => {
    let channel: unknown;
    mockIPC((cmd, args) => {
      if (cmd === "subscribe") channel = (args as { on_event: unknown }).on_event;
      return null;
    });
    const got: unknown[] = [];
    await tauriBackend.subscribe((e) => got.push(e));
    sendToChannel(channel, 0, { type: "files_changed" });
    expect(got).toEqual([{ type: "files_changed" }]);
  });

  it("rejects with the command's {code, message} error", async () => {
    mockIPC(() => {
      throw { code: "conflict", message: "changed on disk" };
    });
    await expect(tauriBackend.writeFile("a.md", "x", "v1")).rejects.toEqual({ code: "conflict", message: "changed on disk" });
  });
});

describe("the web view's context menu", () => {
  it("is kept for text fields, the editor and selected text, and nowhere else", () => {
    document.body.innerHTML = `<p id="p">text</p><textarea id="t"></textarea><div contenteditable="true"><span id="c">x</span></div><input id="i">`;
    const at = (id: string) => document.getElementById(id);
    expect(wantsMenu(at("p"), "")).toBe(false);
    expect(wantsMenu(at("p"), "some words")).toBe(true);
    expect(wantsMenu(at("t"), "")).toBe(true);
    expect(wantsMenu(at("i"), "")).toBe(true);
    expect(wantsMenu(at("c"), "")).toBe(true);
    expect(wantsMenu(null, "")).toBe(false);

    limitContextMenu(window);
    const rightClick = (el: Element | null) => {
      const e = new MouseEvent("contextmenu", { bubbles: true, cancelable: true });
      el?.dispatchEvent(e);
      return e.defaultPrevented;
    };
    expect(rightClick(at("p"))).toBe(true);
    expect(rightClick(at("t"))).toBe(false);
  });
});
