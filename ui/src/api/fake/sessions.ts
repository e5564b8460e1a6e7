// The fake backend's sessions: entries in a tree with an active leaf, as the real store keeps them.
import { appError } from "../errors";
import type { LastRun, Picture, SessionSummary, SessionView, SummaryOf, ThinkingLevel, ToolCallView, TranscriptItem } from "../types";

type Body =
  | { kind: "user"; text: string; pictures?: Picture[] }
  | { kind: "assistant"; text: string; tool_calls: ToolCallView[]; stop: string | null }
  | { kind: "summary"; text: string; what: SummaryOf };

interface Entry {
  id: string;
  parent: string | null;
  seq: number;
  body: Body;
}

export class FakeSession {
  /** The conversation's thinking level (`null`: the provider's own). */
  thinking: ThinkingLevel | null = null;
  title: string | null = null;
  /** How the last run ended, as a session file keeps it. */
  lastRun: LastRun | null = null;
  updated_ms: number;
  leaf: string | null = null;
  private entries = new Map<string, Entry>();
  private seq = 0;

  constructor(
    readonly id: string,
    now: number,
  ) {
    this.updated_ms = now;
  }

  get size(): number {
    return this.entries.size;
  }

  add(parent: string | null, body: Body, now: number): string {
    this.seq += 1;
    const id = `${this.id}-e${this.seq}`;
    this.entries.set(id, { id, parent, seq: this.seq, body });
    this.leaf = id;
    this.updated_ms = now;
    return id;
  }

  body(id: string): Body {
    const e = this.entries.get(id);
    if (!e) throw appError("not_found", `no entry ${id}`);
    return e.body;
  }

  parentOf(id: string): string | null {
    const e = this.entries.get(id);
    if (!e) throw appError("not_found", `no entry ${id}`);
    return e.parent;
  }

  private children(id: string | null): Entry[] {
    return [...this.entries.values()].filter((e) => e.parent === id).sort((a, b) => a.seq - b.seq);
  }

  /** The newest leaf under `id` (or `id` itself). */
  newestLeaf(id: string): string {
    let best: Entry | undefined;
    const walk = (e: Entry) => {
      const kids = this.children(e.id);
      if (kids.length === 0 && (!best || e.seq > best.seq)) best = e;
      kids.forEach(walk);
    };
    const start = this.entries.get(id);
    if (!start) throw appError("not_found", `no entry ${id}`);
    walk(start);
    return (best ?? start).id;
  }

  summary(): SessionSummary {
    const messages = [...this.entries.values()].filter((e) => e.body.kind === "user" || e.body.kind === "assistant").length;
    return { id: this.id, title: this.title, updated_ms: this.updated_ms, messages };
  }

  /** How many entries were ever added (a run's own entries come after its start's count). */
  get added(): number {
    return this.seq;
  }

  /** The active branch; with `known`, without the entries added after the first `known`. */
  view(running: boolean, known = Infinity): SessionView {
    const path: Entry[] = [];
    let cur = this.leaf ? this.entries.get(this.leaf) : undefined;
    while (cur) {
      if (cur.seq <= known) path.unshift(cur);
      cur = cur.parent ? this.entries.get(cur.parent) : undefined;
    }
    const leaf = known === Infinity ? this.leaf : (path[path.length - 1]?.id ?? null);
    const items = path.map((e): TranscriptItem => {
      const b = e.body;
      if (b.kind === "user") {
        const sibs = this.children(e.parent).filter((s) => s.body.kind === "user").map((s) => s.id);
        return {
          kind: "user",
          entry_id: e.id,
          text: b.text,
          pictures: b.pictures ?? [],
          siblings: sibs.length > 1 ? { ids: sibs, index: sibs.indexOf(e.id) } : null,
        };
      }
      if (b.kind === "assistant") {
        return { kind: "assistant", entry_id: e.id, text: b.text, tool_calls: b.tool_calls.map((c) => ({ ...c })), stop: b.stop };
      }
      return { kind: "summary", entry_id: e.id, text: b.text, what: b.what };
    });
    const leaves = [...this.entries.values()].filter((e) => this.children(e.id).length === 0).length;
    const lastRun = known === Infinity ? this.lastRun : null;
    return { id: this.id, title: this.title, items, leaf, branches: Math.max(leaves, this.leaf ? 1 : 0), running, last_run: lastRun, thinking: this.thinking, interrupted: null };
  }
}
