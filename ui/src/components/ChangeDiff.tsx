import type { FileChange } from "../api/types";
import { useDiff } from "../editor/useDiff";

/** A file a tool call changes: its path, and the lines it removes above the lines it adds. */
export function ChangeDiff({ change }: { change: FileChange }) {
  const created = change.before === null;
  const { host, failed } = useDiff((m, el) => m.createChangeView(el, change.before ?? "", change.after), [change.before ?? "", change.after]);
  return (
    <div className="change" data-testid="tool-diff" data-path={change.path}>
      <div className="change-head">
        <span className="change-path" title={change.path}>
          {change.path}
        </span>
        <span className="change-kind">{created ? "new file" : "changes"}</span>
      </div>
      {failed ? <pre className="tool-args">{change.after}</pre> : <div className="change-view" ref={host} />}
    </div>
  );
}
