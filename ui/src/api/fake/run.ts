// One run of the fake backend: streams an answer in deltas, asks approval for a tool call
// when the prompt says "tool" (bash) or "edit" (edit_file on AGENTS.md, with its diff),
// takes steering at save points, and stops on abort.
import type { Listener } from "../backend";
import type { AppEvent, ApprovalDecision, ContentBlock, FileChange, Outcome, Picture, QueueMode, RunEvent, StopReason, ToolCallView } from "../types";
import type { FakeChanges } from "./changes";
import type { FakeSession } from "./sessions";
import { isoDate, type FakeWorkspace } from "./workspace";

export interface RunHost {
  delay(factor?: number): Promise<void>;
  now(): number;
  workspace: FakeWorkspace;
  changes: FakeChanges;
  emitApp(e: AppEvent): void;
  /** The "always" scopes the user allowed (a tool without a scope counts by name). */
  alwaysAllowed: Set<string>;
  /** How queued follow-ups are delivered. */
  followUpMode: QueueMode;
}

/** A tool call the fake model makes, and what running it does. */
interface FakeCall {
  intro: string;
  name: string;
  arguments: Record<string, string>;
  change: FileChange | null;
  reason: string | null;
  always: string | null;
  run(callId: string): string;
}

const ABORTED = Symbol("aborted");
class Failed {
  constructor(readonly message: string) {}
}

export function answerFor(prompt: string): string {
  const first = prompt.split(/\s+/).find((w) => w.length > 3) ?? "notes";
  return (
    `You asked: “${prompt.trim()}”.\n\n` +
    "This is the **preview backend**: it runs in the browser without a model and streams a reply " +
    "in small pieces so the interface can be tried out.\n\n" +
    "- Say *tool* to see a tool call that needs approval, *edit* for a change to a file.\n" +
    "- Say *remember* to see a memory flush, *compact* for a compaction, *fail* for a failed run.\n\n" +
    "```bash\n" +
    `cairn search "${first.replace(/[^\w-]/g, "")}"\n` +
    "```\n"
  );
}

function answerForPictures(pictures: Picture[]): string {
  const named = pictures.map((p) => `**${p.name ?? "picture"}** (${p.width} × ${p.height} px)`).join(", ");
  return `You sent ${named}. This is the **preview backend**: it has no model that sees pictures, so it only knows their names and sizes.\n`;
}

function pieces(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 3) out.push(words.slice(i, i + 3).join(""));
  return out;
}

export class FakeRun {
  private aborted = false;
  private steering: string[] = [];
  private followUps: string[] = [];
  private approvals = new Map<string, (d: ApprovalDecision | null) => void>();
  private steps = 0;
  private toolCalls = 0;
  private outChars = 0;
  private runId = "";

  constructor(
    private host: RunHost,
    private session: FakeSession,
    private emit: Listener<RunEvent>,
  ) {}

  abort(): void {
    this.aborted = true;
    for (const resolve of this.approvals.values()) resolve(null);
    this.approvals.clear();
  }

  steer(text: string): void {
    this.steering.push(text);
  }

  followUp(text: string): void {
    this.followUps.push(text);
    this.emit({ type: "follow_ups", queued: [...this.followUps], returned: [] });
  }

  takeFollowUp(index: number): string | null {
    const [taken] = this.followUps.splice(index, 1);
    if (taken === undefined) return null;
    this.emit({ type: "follow_ups", queued: [...this.followUps], returned: [] });
    return taken;
  }

  /** Follow-ups the run did not reach go back to the page. */
  private giveBack(): void {
    if (this.followUps.length === 0) return;
    const returned = this.followUps.splice(0);
    this.emit({ type: "follow_ups", queued: [], returned });
  }

  resolve(requestId: string, decision: ApprovalDecision): boolean {
    const r = this.approvals.get(requestId);
    if (!r) return false;
    this.approvals.delete(requestId);
    r(decision);
    return true;
  }

  async play(parent: string | null, prompt: string, pictures: Picture[] = []): Promise<void> {
    const started = this.host.now();
    const session = this.session;
    this.runId = `run-${started}`;
    this.emit({ type: "agent_start", run_id: this.runId, session_id: session.id });
    let outcome: Outcome = { kind: "completed" };
    try {
      if (/\bcompact/i.test(prompt)) parent = await this.compact(parent);
      this.emit({ type: "phase_changed", phase: "turn" });
      const userId = session.add(parent, { kind: "user", text: prompt, pictures }, this.host.now());
      if (!session.title) session.title = prompt.trim().slice(0, 48) || (pictures[0]?.name ?? null);
      this.emit({ type: "message_start", role: "user" });
      const content: ContentBlock[] = [...(prompt || !pictures.length ? [{ type: "text" as const, text: prompt }] : []), ...pictures.map((p) => ({ type: "image" as const, ...p }))];
      this.emit({ type: "message_end", entry_id: userId, message: { role: "user", content } });
      if (pictures.length) {
        const what = pictures.length === 1 ? "the picture" : "the pictures";
        this.emit({ type: "notice", level: "info", message: `The preview model does not see pictures: it was given the text read from ${what} and ${pictures.length === 1 ? "its" : "their"} size, not ${what} itself` });
      }
      this.emit({
        type: "context_gathered",
        parts: [
          { name: "AGENTS.md", chars: this.host.workspace.text("AGENTS.md").length, cut: false },
          { name: "MEMORY.md", chars: this.host.workspace.text("MEMORY.md").length, cut: false },
          { name: "today", chars: 180, cut: false },
        ],
        recall: ["knowledge/garden.md#L3-L5"],
      });
      await this.turn(async () => {
        if (/\btools?\b/i.test(prompt)) await this.toolTurn(this.listing());
        if (/\bedit\b/i.test(prompt)) await this.toolTurn(this.agentsEdit());
        if (/\bfail/i.test(prompt)) {
          await this.stream("Let me think about th", []);
          throw new Failed("The provider answered 503 Service Unavailable (preview).");
        }
        await this.stream(pictures.length && !prompt.trim() ? answerForPictures(pictures) : answerFor(prompt), []);
      });
      for (;;) {
        while (this.steering.length > 0) {
          const text = this.steering.shift() ?? "";
          await this.turn(async () => {
            const id = session.add(session.leaf, { kind: "user", text }, this.host.now());
            this.emit({ type: "message_end", entry_id: id, message: { role: "user", content: [{ type: "text", text }] } });
            await this.stream(`Understood — taking that into account: *${text.trim()}*.`, []);
          });
        }
        // Where the run would end, the follow-ups are delivered and it goes on.
        if (this.followUps.length === 0) break;
        const texts = this.followUps.splice(0, this.host.followUpMode === "one-at-a-time" ? 1 : this.followUps.length);
        this.emit({ type: "follow_ups", queued: [...this.followUps], returned: [] });
        await this.turn(async () => {
          for (const text of texts) {
            const id = session.add(session.leaf, { kind: "user", text }, this.host.now());
            this.emit({ type: "message_end", entry_id: id, message: { role: "user", content: [{ type: "text", text }] } });
          }
          await this.stream(answerFor(texts.join(" ")), []);
        });
      }
      if (/\bremember/i.test(prompt)) this.flush(prompt);
    } catch (e) {
      if (e === ABORTED) outcome = { kind: "aborted" };
      else if (e instanceof Failed) {
        this.emit({ type: "notice", level: "error", message: e.message });
        outcome = { kind: "failed", error: { code: "fatal", message: e.message } };
      } else throw e;
    }
    this.giveBack();
    this.emit({ type: "phase_changed", phase: "idle" });
    this.emit({
      type: "agent_end",
      outcome,
      summary: {
        steps: this.steps,
        tool_calls: this.toolCalls,
        input_tokens: 1200 * Math.max(1, this.steps),
        output_tokens: Math.round(this.outChars / 4),
        duration_ms: this.host.now() - started,
      },
      session_id: session.id,
    });
  }

  private async turn(body: () => Promise<void>): Promise<void> {
    this.steps += 1;
    const step = this.steps;
    this.emit({ type: "turn_start", step });
    await body();
    this.emit({ type: "turn_end", step, tool_calls: this.toolCalls });
  }

  private async stream(text: string, calls: ToolCallView[]): Promise<string> {
    this.emit({ type: "message_start", role: "assistant" });
    let sent = "";
    for (const piece of pieces(text)) {
      await this.host.delay();
      if (this.aborted) {
        this.record(sent, calls, "aborted");
        throw ABORTED;
      }
      sent += piece;
      this.outChars += piece.length;
      this.emit({ type: "message_delta", text: piece });
    }
    return this.record(text, calls, null);
  }

  private record(text: string, calls: ToolCallView[], stop: StopReason | null): string {
    const id = this.session.add(this.session.leaf, { kind: "assistant", text, tool_calls: calls, stop }, this.host.now());
    this.emit({
      type: "message_end",
      entry_id: id,
      message: {
        role: "assistant",
        content: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...calls.map((c) => ({ type: "tool_call" as const, id: c.call_id, name: c.name, arguments: c.arguments })),
        ],
        stop_reason: stop ?? (calls.length ? "tool_use" : "end_turn"),
      },
    });
    return id;
  }

  private async toolTurn(call: FakeCall): Promise<void> {
    const view: ToolCallView = { call_id: `call-${this.host.now()}`, name: call.name, arguments: call.arguments, result: null };
    await this.stream(call.intro, [view]);
    this.toolCalls += 1;
    const { call_id, name, arguments: args } = view;
    this.emit({ type: "tool_start", call_id, name, arguments: args, change: call.change });
    let decision: ApprovalDecision | null = "allow_once";
    if (call.reason || !this.host.alwaysAllowed.has(call.always ?? name)) {
      const request_id = `req-${call_id}`;
      const answer = new Promise<ApprovalDecision | null>((resolve) => this.approvals.set(request_id, resolve));
      this.emit({ type: "approval_requested", request_id, call_id, name, arguments: args, change: call.change, reason: call.reason, always: call.always });
      decision = await answer;
      if (decision === null || this.aborted) throw ABORTED;
      if (decision === "allow_always" && call.always) this.host.alwaysAllowed.add(call.always);
      this.emit({ type: "approval_resolved", request_id, call_id, decision });
    }
    if (decision === "deny") {
      view.result = { content: "The user denied this call.", is_error: true, pictures: [] };
    } else {
      await this.host.delay(4);
      const output = call.run(call_id);
      this.emit({ type: "tool_update", call_id, text: output });
      view.result = { content: output, is_error: false, pictures: [] };
    }
    this.emit({ type: "tool_end", call_id, name, content: view.result.content, is_error: view.result.is_error, pictures: view.result.pictures });
    this.emit({ type: "turn_end", step: this.steps, tool_calls: this.toolCalls });
    this.steps += 1;
    this.emit({ type: "turn_start", step: this.steps });
  }

  /** `bash` listing the notes ("tool"): may be allowed always for commands starting with `ls`. */
  private listing(): FakeCall {
    const ws = this.host.workspace;
    return {
      intro: "Let me look at the workspace first.",
      name: "bash",
      arguments: { command: "ls memory knowledge" },
      change: null,
      reason: null,
      always: "bash commands starting with `ls`",
      run: () => ws.paths().filter((p) => /^(memory|knowledge)\//.test(p)).join("\n"),
    };
  }

  /** `edit_file` on AGENTS.md ("edit"): a protected file, so it asks with a reason, and only once. */
  private agentsEdit(): FakeCall {
    const ws = this.host.workspace;
    const path = "AGENTS.md";
    const old_string = "- Keep answers short unless asked.";
    const new_string = "- Keep answers short unless asked.\n- Answer in the language of the question.";
    const before = ws.has(path) ? ws.text(path) : "";
    const after = before.replace(old_string, new_string);
    return {
      intro: "I will add that rule to AGENTS.md.",
      name: "edit_file",
      arguments: { path, old_string, new_string },
      change: { path, before: ws.has(path) ? before : null, after },
      reason: "AGENTS.md steers every later session",
      always: null,
      run: (callId) => {
        const kept = { session_id: this.session.id, run_id: this.runId, call_id: callId, tool: "edit_file", path };
        this.host.changes.record({ ...kept, before: ws.has(path) ? ws.text(path) : null, after }, this.host.now());
        const version = ws.put(path, after);
        this.host.emitApp({ type: "file_changed", path, version });
        return `Edited ${path}.`;
      },
    };
  }
  private async compact(parent: string | null): Promise<string | null> {
    this.emit({ type: "phase_changed", phase: "compaction" });
    this.emit({ type: "compaction_start", reason: "asked for", background: false });
    await this.host.delay(6);
    const id = this.session.add(parent, { kind: "summary", text: "Earlier: garden planning and the review date.", what: "compaction" }, this.host.now());
    this.emit({ type: "compaction_end", tokens_before: 48_000, tokens_after: 6_500 });
    return id;
  }

  private flush(prompt: string): void {
    const ws = this.host.workspace;
    const path = `memory/${isoDate(this.host.now())}.md`;
    const before = ws.has(path) ? ws.text(path) : `# ${isoDate(this.host.now())}\n\n`;
    const version = ws.put(path, `${before}- ${prompt.replace(/\s+/g, " ").trim()}\n`);
    this.emit({ type: "memory_flushed", path, bullets: 1 });
    this.host.emitApp({ type: "memory_flushed", path, bullets: 1 });
    this.host.emitApp({ type: "file_changed", path, version });
  }
}
