import { groupByRun, useChangesApi } from "../lib/changes";
import { ChangeDiff } from "./ChangeDiff";
import { RevertButton } from "./RevertButton";

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/**
 * Every file the open session's runs changed, newest run first: each file's diff over the
 * whole run, revertible on its own (refused when the file changed since).
 */
export function ChangesView({ onOpenFile }: { onOpenFile(path: string): void }) {
  const api = useChangesApi();
  const runs = groupByRun(api?.list ?? []);
  if (runs.length === 0) return <div className="empty-panel muted">No file changed by the agent in this session yet. What its runs write or edit shows here, and can be reverted.</div>;
  return (
    <div className="changes-view panel-scroll" data-testid="changes-view">
      {runs.map((run, i) => (
        <section key={run.run_id} data-testid="changes-run" data-run={run.run_id}>
          <h3>
            {i === 0 ? "Latest run" : "Run"} · {when(run.made_at)}
            <span className="muted">
              {" "}
              · {run.files.length} file{run.files.length === 1 ? "" : "s"}
            </span>
          </h3>
          {run.files.map((f) => (
            <div key={f.path} className="changes-file" data-testid="changes-file" data-path={f.path} data-state={f.state}>
              <ChangeDiff change={f} />
              <div className="changes-actions">
                {f.count > 1 && <span className="muted">{f.count} changes</span>}
                <button type="button" className="link-button" onClick={() => onOpenFile(f.path)}>
                  Open
                </button>
                <RevertButton ids={f.ids} state={f.state} what={`the run's changes to ${f.path}`} />
              </div>
            </div>
          ))}
        </section>
      ))}
    </div>
  );
}
