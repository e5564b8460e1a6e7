// The agent's kept changes as the page uses them: the context that lets a tool card find
// the change its call made, and the grouping of the Changes view (per run, per file).
import { createContext, useContext } from "react";
import type { AgentChange, ChangeState } from "../api/types";

export interface ChangesApi {
  /** The open session's kept changes, oldest first. */
  list: AgentChange[];
  /** The change a tool call made, if one was kept. */
  forCall(callId: string): AgentChange | null;
  /** Reverts `ids`; resolves to null once done, or to why it was refused. */
  revert(ids: string[]): Promise<string | null>;
}

export const ChangesContext = createContext<ChangesApi | null>(null);

export function useChangesApi(): ChangesApi | null {
  return useContext(ChangesContext);
}

/** A run's changes to one file: the text before the first still in place, and after the last. */
export interface FileChanges {
  path: string;
  before: string | null;
  after: string;
  state: ChangeState;
  /** What "Revert" reverts: the changes not reverted yet. */
  ids: string[];
  count: number;
}

/** The files one run changed, in the order it first changed them. */
export interface RunChanges {
  run_id: string;
  made_at: string;
  files: FileChanges[];
}

function fileChanges(path: string, changes: AgentChange[]): FileChanges {
  const open = changes.filter((c) => c.state !== "reverted");
  // All reverted: the run's whole change to the file, shown as undone.
  const shown = open.length ? open : changes;
  const first = shown[0] as AgentChange;
  const last = shown[shown.length - 1] as AgentChange;
  const state: ChangeState = open.length === 0 ? "reverted" : last.state === "applied" ? "applied" : "changed_since";
  return { path, before: first.before, after: last.after, state, ids: open.map((c) => c.id), count: changes.length };
}

/** `list` (oldest first) grouped by run, newest run first, and by file within a run. */
export function groupByRun(list: AgentChange[]): RunChanges[] {
  const runs = new Map<string, AgentChange[]>();
  for (const c of list) runs.set(c.run_id, [...(runs.get(c.run_id) ?? []), c]);
  return [...runs.entries()]
    .map(([run_id, changes]) => {
      const paths = [...new Set(changes.map((c) => c.path))];
      return {
        run_id,
        made_at: (changes[0] as AgentChange).made_at,
        files: paths.map((p) => fileChanges(p, changes.filter((c) => c.path === p))),
      };
    })
    .reverse();
}
