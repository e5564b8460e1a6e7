// The fake backend's kept changes: what its runs changed in files, listed with their
// state and reverted under the same rules as the app's (never over a later edit).
import { appError } from "../errors";
import type { AgentChange } from "../types";
import type { FakeWorkspace } from "./workspace";

type Kept = Omit<AgentChange, "state">;

export class FakeChanges {
  private kept: Kept[] = [];

  constructor(private ws: FakeWorkspace) {}

  /** Keeps a change about to be made. */
  record(change: Pick<Kept, "session_id" | "run_id" | "call_id" | "tool" | "path" | "before" | "after">, now: number): void {
    const id = `c${this.kept.length + 1}-${now.toString(36)}`;
    this.kept.push({ ...change, id, existed: change.before !== null, made_at: new Date(now).toISOString(), reverted_at: null });
  }

  private current(path: string): string | null {
    return this.ws.has(path) ? this.ws.text(path) : null;
  }

  list(sessionId: string): AgentChange[] {
    return this.kept
      .filter((c) => c.session_id === sessionId)
      .map((c) => ({ ...c, state: c.reverted_at ? "reverted" : this.current(c.path) === c.after ? "applied" : "changed_since" }));
  }

  /** Puts back the text before the first of `ids`; returns the file's path. */
  revert(sessionId: string, ids: string[], now: number): string {
    const picked = this.kept.filter((c) => c.session_id === sessionId && ids.includes(c.id));
    if (picked.length !== new Set(ids).size) throw appError("not_found", "no kept change has that id");
    const first = picked[0];
    const last = picked[picked.length - 1];
    if (!first || !last) throw appError("invalid", "no change was given");
    const path = first.path;
    if (picked.some((c) => c.path !== path)) throw appError("invalid", "these changes are not all to the same file");
    if (picked.some((c) => c.reverted_at)) throw appError("conflict", `this change to \`${path}\` was already reverted`);
    if (picked.some((c, i) => i > 0 && c.before !== picked[i - 1]?.after)) {
      throw appError("conflict", `\`${path}\` was changed by something else between these changes; revert them one at a time, newest first`);
    }
    if (this.current(path) !== last.after) {
      throw appError("conflict", `\`${path}\` changed since (edited, or changed again by the agent), so reverting would lose that; nothing was written.`);
    }
    if (first.before === null) this.ws.trashPath(path, now);
    else this.ws.put(path, first.before);
    const at = new Date(now).toISOString();
    picked.forEach((c) => (c.reverted_at = at));
    return path;
  }
}
