import type { RunState } from "../state/run";
import { count, duration } from "../lib/time";

const PHASES: Record<string, string> = { idle: "idle", turn: "answering", compaction: "compacting", branch_summary: "summarising the branch", retry: "retrying" };

export function phaseLabel(phase: string): string {
  return PHASES[phase] ?? phase;
}

export function RunDetails({ run }: { run: RunState }) {
  const d = run.details;
  if (!d.startedMs) return <div className="empty-panel muted">No run yet in this window. Send a message to see what went into it.</div>;
  const s = d.summary;
  return (
    <div className="run-details panel-scroll" data-testid="run-details">
      <section>
        <h3>Last run</h3>
        <dl className="facts">
          <dt>Status</dt>
          <dd>{run.running ? phaseLabel(run.phase) : (d.outcome?.kind.replace("_", " ") ?? "—")}</dd>
          <dt>Steps</dt>
          <dd>{d.steps}</dd>
          {s && (
            <>
              <dt>Tool calls</dt>
              <dd>{s.tool_calls}</dd>
              <dt>Tokens</dt>
              <dd>
                {count(s.input_tokens)} in · {count(s.output_tokens)} out
              </dd>
              <dt>Duration</dt>
              <dd>{duration(s.duration_ms)}</dd>
            </>
          )}
        </dl>
        {d.outcome?.kind === "failed" && <div className="notice error">{d.outcome.error.message}</div>}
        {d.outcome?.kind === "blocked" && <div className="notice warning">Blocked: {d.outcome.reason}</div>}
      </section>
      {d.workItems.length > 0 && (
        <section>
          <h3>Work items</h3>
          <ul className="work-items" data-testid="work-items">
            {d.workItems.map((item) => (
              <li key={item.id} className={`work-item ${item.status}`}>
                <input type="checkbox" readOnly checked={item.status === "done"} aria-label={item.status.replace("_", " ")} />
                <span>{item.text}</span>
                {item.priority && <span className={`badge priority-${item.priority}`}>{item.priority}</span>}
                {item.status !== "pending" && item.status !== "done" && <em className="muted"> {item.status.replace("_", " ")}</em>}
                {item.artifact && (
                  <div className="muted" data-testid="work-artifact">
                    makes <code>{item.artifact}</code>
                  </div>
                )}
                {item.note && <div className="muted">{item.note}</div>}
              </li>
            ))}
          </ul>
        </section>
      )}
      {d.context?.intent && (
        <section data-testid="intent">
          <h3>What was asked</h3>
          <p>{d.context.intent.goal}</p>
          {d.context.intent.constraints.length > 0 && (
            <ul>
              {d.context.intent.constraints.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
          {d.context.intent.lookups.length > 0 && <p className="small muted">Also looked up: {d.context.intent.lookups.join(" · ")}</p>}
        </section>
      )}
      <section>
        <h3>Context gathered</h3>
        {d.context ? (
          <>
            <table className="parts">
              <thead>
                <tr>
                  <th>Part</th>
                  <th className="num">Characters</th>
                </tr>
              </thead>
              <tbody>
                {d.context.parts.map((p) => (
                  <tr key={p.name}>
                    <td>
                      {p.name}
                      {p.cut && <span className="badge warn">cut</span>}
                    </td>
                    <td className="num">{count(p.chars)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h4>Recalled from memory</h4>
            {d.context.recall.length ? (
              <ul className="recall">
                {d.context.recall.map((r) => (
                  <li key={r}>
                    <code>{r}</code>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted small">Nothing recalled.</p>
            )}
          </>
        ) : (
          <p className="muted small">Not reported yet.</p>
        )}
      </section>
    </div>
  );
}
