import { describe, expect, it } from "vitest";
import type { RunEvent } from "../api/types";
import { initialRunState, runReducer, type LiveItem, type RunAction, type RunState } from "../state/run";

const play = (events: RunEvent[], from: RunState = initialRunState): RunState =>
  events.reduce((s, event) => runReducer(s, { type: "event", event }), from);
const act = (actions: RunAction[], from: RunState = initialRunState): RunState => actions.reduce(runReducer, from);
const assistants = (s: RunState) => s.items.filter((i): i is Extract<LiveItem, { kind: "assistant" }> => i.kind === "assistant");

const begun = act([{ type: "begin", sessionId: "s1", text: "hello", cutAt: null, now: 1 }]);

describe("run reducer", () => {
  it("shows a subagent's activity and asks its approvals on the tool card that started it", () => {
    const wrap = (event: RunEvent): RunEvent => ({ type: "subagent", task_id: "t1", agent: "researcher", call_id: "c1", model_used: "fast/mini", event });
    let s = play(
      [
        { type: "tool_start", call_id: "c1", name: "agent_send", arguments: { agent: "researcher" } },
        wrap({ type: "agent_start", run_id: "r2", session_id: "child" }),
        wrap({ type: "tool_start", call_id: "k1", name: "read_file", arguments: { path: "a.md" } }),
        wrap({ type: "approval_requested", request_id: "q1", call_id: "k2", name: "bash", arguments: { command: "ls" }, always: "bash commands starting with `ls`" }),
      ],
      begun,
    );
    const card = () => assistants(s)[0].tools[0];
    expect(card()).toMatchObject({
      call_id: "c1",
      status: "approval",
      request_id: "q1",
      always: "bash commands starting with `ls`",
      asked_by: { via: "researcher", name: "bash", arguments: { command: "ls" } },
    });
    expect(card().reason).toBe("The subagent researcher asks to run bash.");
    expect(card().output).toBe("[researcher] started on fast/mini\n[researcher] → read_file\n");
    s = play([wrap({ type: "approval_resolved", request_id: "q1", call_id: "k2", decision: "allow_once" })], s);
    expect(card()).toMatchObject({ status: "running", request_id: null, asked_by: null });
    // A later, unknown event changes nothing.
    const unknown = { type: "from_the_future" } as unknown as RunEvent;
    expect(play([unknown], s)).toBe(s);
  });

  it("keeps the intent step's reading for the run details", () => {
    const intent = { goal: "book the trip", constraints: ["cheap"], lookups: ["Lisbon flights"] };
    const s = play([{ type: "context_gathered", parts: [], recall: [], intent }], begun);
    expect(s.details.context?.intent).toEqual(intent);
  });

  it("keeps the work list the model last wrote", () => {
    const items = [{ id: "1", text: "read", status: "done" as const }, { id: "2", text: "write", status: "in_progress" as const }];
    const s = play([{ type: "work_items", items }], begun);
    expect(s.details.workItems).toEqual(items);
  });

  it("shows the prompt at once and takes its entry id from message_end", () => {
    expect(begun.running).toBe(true);
    expect(begun.items).toMatchObject([{ kind: "user", text: "hello", entry_id: null }]);
    const s = play([{ type: "message_end", entry_id: "e1", message: { role: "user", content: [{ type: "text", text: "hello" }] } }], begun);
    expect(s.items).toHaveLength(1);
    expect(s.items[0]).toMatchObject({ kind: "user", entry_id: "e1" });
  });

  it("coalesces deltas into one streaming message, replaced by the final text", () => {
    let s = play(
      [
        { type: "agent_start", run_id: "r", session_id: "s1" },
        { type: "message_start", role: "assistant" },
        { type: "message_delta", text: "Hel" },
        { type: "message_delta", text: "lo " },
        { type: "message_delta", text: "world" },
      ],
      begun,
    );
    expect(assistants(s)).toHaveLength(1);
    expect(assistants(s)[0]).toMatchObject({ text: "Hello world", streaming: true });
    s = play([{ type: "message_end", entry_id: "e2", message: { role: "assistant", content: [{ type: "text", text: "Hello, world." }], stop_reason: "end_turn" } }], s);
    expect(assistants(s)[0]).toMatchObject({ text: "Hello, world.", streaming: false, entry_id: "e2", stop: null });
  });

  it("starts a message on a delta without message_start", () => {
    const s = play([{ type: "message_delta", text: "x" }], begun);
    expect(assistants(s)[0]).toMatchObject({ text: "x", streaming: true });
  });

  it("moves a tool call through approval, running and done", () => {
    let s = play(
      [
        { type: "message_start", role: "assistant" },
        {
          type: "message_end",
          entry_id: "e2",
          message: { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "bash", arguments: { command: "ls" } }], stop_reason: "tool_use" },
        },
      ],
      begun,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ call_id: "c1", name: "bash", status: "running" });
    s = play([{ type: "approval_requested", request_id: "q1", call_id: "c1", name: "bash", arguments: { command: "ls" } }], s);
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "approval", request_id: "q1" });
    s = play([{ type: "approval_resolved", request_id: "q1", call_id: "c1", decision: "allow_once" }], s);
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "running", request_id: null });
    s = play(
      [
        { type: "tool_start", call_id: "c1", name: "bash", arguments: { command: "ls" } },
        { type: "tool_update", call_id: "c1", text: "a\n" },
        { type: "tool_update", call_id: "c1", text: "b\n" },
      ],
      s,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "running", output: "a\nb\n" });
    s = play([{ type: "tool_end", call_id: "c1", name: "bash", content: "a\nb\n", is_error: false, pictures: [] }], s);
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "done", result: "a\nb\n" });
  });

  it("shows the pictures a tool gave on its card as soon as it ends", () => {
    const picture = { sha256: "ab".repeat(32), media_type: "image/png", bytes: 5513, width: 900, height: 220, name: "receipt.png", text: "Invoice total" };
    let s = play([{ type: "tool_start", call_id: "c1", name: "read_file", arguments: { path: "receipt.png" } }], begun);
    s = play([{ type: "tool_end", call_id: "c1", name: "read_file", content: "a PNG picture", is_error: false, pictures: [picture] }], s);
    expect(assistants(s)[0]?.tools[0]?.pictures).toEqual([picture]);
  });

  it("keeps the change a call makes, and while it asks the reason and the Always scope", () => {
    const change = { path: "AGENTS.md", before: "a\n", after: "b\n" };
    let s = play(
      [
        { type: "tool_start", call_id: "c1", name: "edit_file", arguments: {}, change },
        { type: "approval_requested", request_id: "q1", call_id: "c1", name: "edit_file", arguments: {}, reason: "AGENTS.md steers every later session" },
      ],
      begun,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "approval", change, reason: "AGENTS.md steers every later session", always: null });
    s = play([{ type: "approval_requested", request_id: "q2", call_id: "c2", name: "bash", arguments: {}, always: "the `bash` tool" }], s);
    expect(assistants(s)[0]?.tools[1]).toMatchObject({ change: null, reason: null, always: "the `bash` tool" });
    s = play([{ type: "approval_resolved", request_id: "q1", call_id: "c1", decision: "allow_once" }], s);
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "running", change });
  });

  it("keeps a denied call denied when its error result arrives", () => {
    let s = play([{ type: "approval_requested", request_id: "q1", call_id: "c1", name: "bash", arguments: {} }], begun);
    expect(assistants(s)[0]?.tools[0]?.status).toBe("approval");
    s = play(
      [
        { type: "approval_resolved", request_id: "q1", call_id: "c1", decision: "deny" },
        { type: "tool_end", call_id: "c1", name: "bash", content: "denied", is_error: true, pictures: [] },
      ],
      s,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "denied", result: "denied" });
  });

  it("marks a failed tool as error", () => {
    const s = play(
      [
        { type: "tool_start", call_id: "c2", name: "read", arguments: { path: "x" } },
        { type: "tool_end", call_id: "c2", name: "read", content: "no such file", is_error: true, pictures: [] },
      ],
      begun,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "error", name: "read" });
  });

  it("sets a call running as soon as the user answers, before the backend confirms", () => {
    const s = act(
      [
        { type: "event", event: { type: "approval_requested", request_id: "q1", call_id: "c1", name: "bash", arguments: {} } },
        { type: "approval_sent", request_id: "q1", decision: "allow_always" },
      ],
      begun,
    );
    expect(assistants(s)[0]?.tools[0]).toMatchObject({ status: "running", request_id: null });
  });

  it("adds steering as a user message matched by its entry later", () => {
    let s = act([{ type: "steer", text: "shorter please" }], begun);
    s = play([{ type: "message_end", entry_id: "e9", message: { role: "user", content: [{ type: "text", text: "shorter please" }] } }], s);
    expect(s.items.filter((i) => i.kind === "user")).toMatchObject([{ text: "hello" }, { text: "shorter please", entry_id: "e9" }]);
  });

  it("shows a summary written in the background until it is swapped in, and drops it when it is not used", () => {
    let s = play([{ type: "compaction_start", reason: "75%", background: true }], begun);
    expect(s.items[1]).toMatchObject({ kind: "compaction", done: false, background: true });
    s = play([{ type: "turn_end", step: 1, tool_calls: 0 }, { type: "compaction_end", tokens_before: 9000, tokens_after: 2000 }], s);
    expect(s.items[1]).toMatchObject({ kind: "compaction", done: true, tokens_after: 2000 });
    s = play([{ type: "compaction_start", reason: "75%", background: true }, { type: "compaction_end", tokens_before: 0, tokens_after: 0 }], s);
    expect(s.items.filter((i) => i.kind === "compaction")).toHaveLength(1);
  });

  it("records notices, compaction, flushes and the run details", () => {
    const s = play(
      [
        { type: "context_gathered", parts: [{ name: "MEMORY.md", chars: 120, cut: false }], recall: ["a.md#L1-L2"] },
        { type: "turn_start", step: 1 },
        { type: "notice", level: "warning", message: "slow" },
        { type: "compaction_start", reason: "window", background: false },
        { type: "compaction_end", tokens_before: 9000, tokens_after: 1000 },
        { type: "memory_flushed", path: "memory/2025-01-01.md", bullets: 2 },
        { type: "phase_changed", phase: "turn" },
        {
          type: "agent_end",
          outcome: { kind: "completed" },
          summary: { steps: 1, tool_calls: 0, input_tokens: 10, output_tokens: 5, duration_ms: 900 },
          session_id: "s1",
        },
      ],
      begun,
    );
    expect(s.running).toBe(false);
    expect(s.phase).toBe("idle");
    expect(s.details).toMatchObject({ steps: 1, outcome: { kind: "completed" }, summary: { duration_ms: 900 }, context: { recall: ["a.md#L1-L2"] } });
    expect(s.items.map((i) => i.kind)).toEqual(["user", "notice", "compaction", "flushed"]);
    expect(s.items[2]).toMatchObject({ done: true, tokens_before: 9000, tokens_after: 1000 });
    const settled = runReducer(s, { type: "settled", sessionId: "s1" });
    expect(settled.items.map((i) => i.kind)).toEqual(["notice", "flushed"]);
    expect(settled.details.summary?.steps).toBe(1);
  });

  it("ends a streaming message when the run ends early", () => {
    const s = play(
      [
        { type: "message_delta", text: "part" },
        { type: "agent_end", outcome: { kind: "aborted" }, summary: { steps: 1, tool_calls: 0, input_tokens: 0, output_tokens: 0, duration_ms: 1 }, session_id: "s1" },
      ],
      begun,
    );
    expect(assistants(s)[0]?.streaming).toBe(false);
    expect(s.details.outcome).toEqual({ kind: "aborted" });
  });

  it("drops the unsent prompt and reports the error when a run cannot start", () => {
    const s = act([{ type: "start_failed", error: { code: "busy", message: "running" } }], begun);
    expect(s.running).toBe(false);
    expect(s.items).toEqual([]);
    expect(s.details.outcome).toEqual({ kind: "failed", error: { code: "busy", message: "running" } });
    expect(s.details.prompt).toBe("hello");
  });

  it("hides the transcript from an edited message on", () => {
    const s = act([{ type: "begin", sessionId: "s1", text: "edited", cutAt: "e5", now: 1 }]);
    expect(s.cutAt).toBe("e5");
    expect(runReducer(s, { type: "settled", sessionId: "s1" }).cutAt).toBeNull();
  });
});
