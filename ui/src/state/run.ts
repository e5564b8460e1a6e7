// The live view of a run, built from RunEvents by a pure reducer (events in, view state out).
// The transcript (SessionView.items) stays as loaded; while a run goes on, `items` holds what
// the run added since, and after agent_end the session is loaded again and `settled` drops them.
import type { AppError, ApprovalDecision, FileChange, Message, NoticeLevel, Intent, Outcome, Phase, Picture, RunEvent, RunSummary, WorkItem } from "../api/types";
import { failureKind } from "../api/errors";

export type ToolStatus = "running" | "approval" | "done" | "error" | "denied";

export interface ToolCallState {
  call_id: string;
  name: string;
  arguments: unknown;
  status: ToolStatus;
  /** Set while the call waits for the user's decision. */
  request_id: string | null;
  /** The file the call changes, before and after, when the harness said. */
  change: FileChange | null;
  /** While asking: why this call asks, and what "Allow always" would allow (null: only once). */
  reason: string | null;
  always: string | null;
  /** While a subagent this call started asks: which one (outer first, "a › b"), and the
   * call it wants to make. */
  asked_by: { via: string; name: string; arguments: unknown } | null;
  /** Live output from tool_update events, and the activity of a subagent it started. */
  output: string;
  result: string | null;
  /** Pictures the call gave (`read_file` on a picture). */
  pictures: Picture[];
}

export type LiveItem =
  | { kind: "user"; key: string; entry_id: string | null; text: string; pictures: Picture[] }
  | { kind: "assistant"; key: string; entry_id: string | null; text: string; thinking: string; streaming: boolean; tools: ToolCallState[]; stop: string | null }
  | { kind: "notice"; key: string; level: NoticeLevel; text: string }
  | { kind: "compaction"; key: string; done: boolean; background: boolean; reason: string; tokens_before: number | null; tokens_after: number | null }
  | { kind: "flushed"; key: string; path: string; bullets: number };

export interface RunDetails {
  sessionId: string | null;
  /** The prompt as typed and its pictures (to send again when the run could not start). */
  prompt: string | null;
  pictures: Picture[];
  context: { parts: { name: string; chars: number; cut: boolean }[]; recall: string[]; intent: Intent | null } | null;
  steps: number;
  outcome: Outcome | null;
  summary: RunSummary | null;
  startedMs: number | null;
  /** The work list as the model last wrote it. */
  workItems: WorkItem[];
}

export interface RunState {
  running: boolean;
  phase: Phase;
  /** Transcript entries from this one on are hidden: an edit or a retry replaces them. */
  cutAt: string | null;
  items: LiveItem[];
  details: RunDetails;
  seq: number;
  /** Follow-ups the core holds for this run, oldest first. */
  followUps: string[];
  /** Follow-ups the core gave back undelivered (the run was stopped or failed), for the
   * message box; `seq` tells one return from the next. */
  returned: { texts: string[]; seq: number } | null;
}

export type RunAction =
  | { type: "begin"; sessionId: string; text: string | null; pictures?: Picture[]; cutAt: string | null; now: number }
  | { type: "event"; event: RunEvent }
  | { type: "steer"; text: string }
  | { type: "approval_sent"; request_id: string; decision: ApprovalDecision }
  | { type: "start_failed"; error: AppError }
  /** The session was loaded again after agent_end (under this id). */
  | { type: "settled"; sessionId: string }
  | { type: "reset" };

const emptyDetails: RunDetails = { sessionId: null, prompt: null, pictures: [], context: null, steps: 0, outcome: null, summary: null, startedMs: null, workItems: [] };

export const initialRunState: RunState = { running: false, phase: "idle", cutAt: null, items: [], details: emptyDetails, seq: 0, followUps: [], returned: null };

/** A stop reason worth showing (normal ends are not). */
export function visibleStop(reason: string | null | undefined): string | null {
  if (!reason || ["end_turn", "stop", "tool_use", "tool_calls", "completed"].includes(reason)) return null;
  return reason;
}

function thinkingOf(message: Message): string {
  if (message.role === "tool_result") return "";
  return message.content.map((b) => (b.type === "thinking" ? b.text : "")).join("");
}

function textOf(message: Message): string {
  if (message.role === "tool_result") return message.content;
  return message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** The pictures of a message: a user's, or those a tool gave. */
export function picturesOf(message: Message): Picture[] {
  if (message.role === "tool_result") return message.pictures ?? [];
  return message.content.flatMap((b) => {
    if (b.type !== "image") return [];
    const { type: _type, ...picture } = b;
    return [picture];
  });
}

function lastIndex<T>(list: T[], pred: (x: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i -= 1) if (pred(list[i] as T)) return i;
  return -1;
}

/** A call just seen, running until events say more. */
export function toolCall(call_id: string, name: string, args: unknown): ToolCallState {
  return { call_id, name, arguments: args, status: "running", request_id: null, change: null, reason: null, always: null, asked_by: null, output: "", result: null, pictures: [] };
}

type Assistant = Extract<LiveItem, { kind: "assistant" }>;

function push(state: RunState, make: (key: string) => LiveItem): RunState {
  const seq = state.seq + 1;
  return { ...state, seq, items: [...state.items, make(`live-${seq}`)] };
}

/** Applies `change` to the tool call `call_id`, adding it to the last assistant message if unseen. */
function updateTool(state: RunState, call_id: string, seed: { name: string; arguments: unknown }, change: (t: ToolCallState) => ToolCallState): RunState {
  let found = false;
  const items = state.items.map((it) => {
    if (it.kind !== "assistant" || !it.tools.some((t) => t.call_id === call_id)) return it;
    found = true;
    return { ...it, tools: it.tools.map((t) => (t.call_id === call_id ? change(t) : t)) };
  });
  if (found) return { ...state, items };
  const fresh = toolCall(call_id, seed.name, seed.arguments);
  const at = lastIndex(state.items, (it) => it.kind === "assistant");
  if (at >= 0) {
    const a = state.items[at] as Assistant;
    const next = [...state.items];
    next[at] = { ...a, tools: [...a.tools, change(fresh)] };
    return { ...state, items: next };
  }
  return push(state, (key) => ({ kind: "assistant", key, entry_id: null, text: "", thinking: "", streaming: false, stop: null, tools: [change(fresh)] }));
}

function messageEnd(state: RunState, entry_id: string, message: Message): RunState {
  if (message.role === "tool_result") {
    const pictures = picturesOf(message);
    if (pictures.length === 0) return state;
    return updateTool(state, message.call_id, { name: message.tool_name, arguments: null }, (t) => ({ ...t, pictures }));
  }
  if (message.role === "user") {
    const text = textOf(message);
    const pictures = picturesOf(message);
    const at = state.items.findIndex((it) => it.kind === "user" && it.entry_id === null && it.text.trim() === text.trim());
    if (at >= 0) {
      const items = [...state.items];
      items[at] = { ...(items[at] as Extract<LiveItem, { kind: "user" }>), entry_id, pictures };
      return { ...state, items };
    }
    return push(state, (key) => ({ kind: "user", key, entry_id, text, pictures }));
  }
  const calls = message.content.flatMap((b) => (b.type === "tool_call" ? [b] : []));
  const final = (a: Assistant): Assistant => {
    const tools = calls.map(
      (c): ToolCallState =>
        a.tools.find((t) => t.call_id === c.id) ?? toolCall(c.id, c.name, c.arguments),
    );
    const extra = a.tools.filter((t) => !calls.some((c) => c.id === t.call_id));
    return { ...a, entry_id, text: textOf(message), thinking: thinkingOf(message), streaming: false, stop: visibleStop(message.stop_reason), tools: [...tools, ...extra] };
  };
  const at = lastIndex(state.items, (it) => it.kind === "assistant" && it.streaming);
  if (at >= 0) {
    const items = [...state.items];
    items[at] = final(items[at] as Assistant);
    return { ...state, items };
  }
  return push(state, (key) => final({ kind: "assistant", key, entry_id: null, text: "", thinking: "", streaming: false, stop: null, tools: [] }));
}

/** The event inside `subagent` wrappers, and the subagents it came through. */
function innermost(e: RunEvent): { agents: string[]; event: RunEvent; model: string | null } {
  const agents: string[] = [];
  let event = e;
  let model: string | null = null;
  while (event.type === "subagent") {
    agents.push(event.agent);
    model = event.model_used ?? null;
    event = event.event;
  }
  return { agents, event, model };
}

/** One line of a subagent's activity under the tool card that started it. */
function activityLine(event: RunEvent, model: string | null): string | null {
  switch (event.type) {
    case "agent_start":
      return model ? `started on ${model}` : "started";
    case "tool_start":
      return `→ ${event.name}`;
    case "tool_end":
      return `${event.is_error ? "✗" : "✓"} ${event.name}`;
    case "agent_end":
      return event.outcome.kind === "completed" ? "done" : `ended: ${event.outcome.kind.replace("_", " ")}`;
    default:
      return null;
  }
}

/** A subagent's event, shown on the parent's tool card: its activity as lines, and its
 * approval requests as the card's own (answered through the parent). */
function subagentEvent(state: RunState, e: Extract<RunEvent, { type: "subagent" }>): RunState {
  const { agents, event, model } = innermost(e);
  const via = agents.join(" › ");
  const seed = { name: "", arguments: null };
  if (event.type === "approval_requested") {
    const reason = `The subagent ${via} asks to run ${event.name}${event.reason ? `: ${event.reason}` : "."}`;
    return updateTool(state, e.call_id, seed, (t) => ({
      ...t,
      status: "approval",
      request_id: event.request_id,
      change: event.change ?? null,
      reason,
      always: event.always ?? null,
      asked_by: { via, name: event.name, arguments: event.arguments },
    }));
  }
  if (event.type === "approval_resolved") {
    return updateTool(state, e.call_id, seed, (t) =>
      t.request_id === event.request_id ? { ...t, request_id: null, status: "running", reason: null, always: null, asked_by: null, change: null } : t,
    );
  }
  const line = activityLine(event, model);
  if (!line) return state;
  return updateTool(state, e.call_id, seed, (t) => ({ ...t, output: `${t.output}[${via}] ${line}\n` }));
}

function applyEvent(state: RunState, e: RunEvent): RunState {
  const d = state.details;
  switch (e.type) {
    case "agent_start":
      return { ...state, running: true };
    case "phase_changed":
      return { ...state, phase: e.phase };
    case "turn_start":
      return { ...state, details: { ...d, steps: Math.max(d.steps, e.step) } };
    case "message_start":
      if (e.role !== "assistant") return state;
      return push(state, (key) => ({ kind: "assistant", key, entry_id: null, text: "", thinking: "", streaming: true, stop: null, tools: [] }));
    case "message_delta":
    case "thinking_delta": {
      const add = (a: Assistant): Assistant => (e.type === "message_delta" ? { ...a, text: a.text + e.text } : { ...a, thinking: a.thinking + e.text });
      const at = lastIndex(state.items, (it) => it.kind === "assistant" && it.streaming);
      if (at < 0) return push(state, (key) => add({ kind: "assistant", key, entry_id: null, text: "", thinking: "", streaming: true, stop: null, tools: [] }));
      const items = [...state.items];
      items[at] = add(items[at] as Assistant);
      return { ...state, items };
    }
    case "message_end":
      return messageEnd(state, e.entry_id, e.message);
    case "tool_start":
      return updateTool(state, e.call_id, e, (t) => {
        const change = e.change ?? t.change;
        return t.status === "denied" ? { ...t, change } : { ...t, change, status: "running", request_id: null };
      });
    case "tool_update":
      return updateTool(state, e.call_id, { name: "", arguments: null }, (t) => ({ ...t, output: t.output + e.text }));
    case "tool_end":
      return updateTool(state, e.call_id, { name: e.name, arguments: null }, (t) => ({
        ...t,
        request_id: null,
        result: e.content,
        pictures: e.pictures?.length ? e.pictures : t.pictures,
        status: t.status === "denied" ? "denied" : e.is_error ? "error" : "done",
      }));
    case "approval_requested":
      return updateTool(state, e.call_id, e, (t) => ({
        ...t,
        status: "approval",
        request_id: e.request_id,
        change: e.change ?? t.change,
        reason: e.reason ?? null,
        always: e.always ?? null,
      }));
    case "approval_resolved":
      return updateTool(state, e.call_id, { name: "", arguments: null }, (t) => ({
        ...t,
        request_id: null,
        status: e.decision === "deny" ? "denied" : t.status === "approval" ? "running" : t.status,
      }));
    case "turn_end":
      return state;
    case "notice":
      return push(state, (key) => ({ kind: "notice", key, level: e.level, text: e.message }));
    case "follow_ups":
      return {
        ...state,
        followUps: e.queued,
        returned: e.returned.length > 0 ? { texts: e.returned, seq: (state.returned?.seq ?? 0) + 1 } : state.returned,
      };
    case "context_gathered":
      return { ...state, details: { ...d, context: { parts: e.parts, recall: e.recall, intent: e.intent ?? null } } };
    case "compaction_start":
      return push(state, (key) => ({ kind: "compaction", key, done: false, background: e.background, reason: e.reason, tokens_before: null, tokens_after: null }));
    case "compaction_end": {
      const at = lastIndex(state.items, (it) => it.kind === "compaction" && !it.done);
      if (at < 0) return state;
      const items = [...state.items];
      // Nothing was compacted (a summary in the background failed or was not used): the
      // line goes; a notice says why when it matters.
      if (e.tokens_before === 0 && e.tokens_after === 0) {
        items.splice(at, 1);
        return { ...state, items };
      }
      items[at] = { ...(items[at] as Extract<LiveItem, { kind: "compaction" }>), done: true, tokens_before: e.tokens_before, tokens_after: e.tokens_after };
      return { ...state, items };
    }
    case "memory_flushed":
      return push(state, (key) => ({ kind: "flushed", key, path: e.path, bullets: e.bullets }));
    case "work_items":
      return { ...state, details: { ...d, workItems: e.items } };
    case "retry": {
      const text = `Retrying in ${Math.ceil(e.delay_ms / 1000)} s (attempt ${e.attempt}): ${e.reason}`;
      return push(state, (key) => ({ kind: "notice", key, level: "warning", text }));
    }
    case "subagent":
      return subagentEvent(state, e);
    case "agent_end": {
      const items = state.items.map((it) => (it.kind === "assistant" && it.streaming ? { ...it, streaming: false } : it));
      return {
        ...state,
        running: false,
        phase: "idle",
        items,
        details: { ...d, outcome: e.outcome, summary: e.summary, steps: Math.max(d.steps, e.summary.steps) },
      };
    }
    default:
      // An event this page does not know (a newer Cairn): nothing to show.
      return state;
  }
}

export function runReducer(state: RunState, action: RunAction): RunState {
  switch (action.type) {
    case "begin": {
      const pictures = action.pictures ?? [];
      const details: RunDetails = { ...emptyDetails, sessionId: action.sessionId, prompt: action.text, pictures, startedMs: action.now };
      const base: RunState = { ...state, running: true, phase: "turn", cutAt: action.cutAt, items: [], details, followUps: [] };
      return action.text === null ? base : push(base, (key) => ({ kind: "user", key, entry_id: null, text: action.text ?? "", pictures }));
    }
    case "event":
      return applyEvent(state, action.event);
    case "steer":
      return push(state, (key) => ({ kind: "user", key, entry_id: null, text: action.text, pictures: [] }));
    case "approval_sent":
      return {
        ...state,
        items: state.items.map((it) =>
          it.kind !== "assistant"
            ? it
            : { ...it, tools: it.tools.map((t) => (t.request_id === action.request_id ? { ...t, request_id: null, status: action.decision === "deny" ? "denied" : "running" } : t)) },
        ),
      };
    case "start_failed":
      return {
        ...state,
        running: false,
        phase: "idle",
        cutAt: null,
        items: state.items.filter((it) => it.kind !== "user" || it.entry_id !== null),
        details: { ...state.details, outcome: { kind: "failed", error: { code: failureKind(action.error.code), message: action.error.message } } },
      };
    case "settled":
      // The reloaded transcript now holds the messages; keep the run's inline notes.
      return {
        ...state,
        cutAt: null,
        items: state.items.filter((it) => it.kind === "notice" || it.kind === "flushed"),
        details: { ...state.details, sessionId: action.sessionId },
      };
    case "reset":
      return { ...initialRunState, details: state.details, seq: state.seq, returned: state.returned };
  }
}
