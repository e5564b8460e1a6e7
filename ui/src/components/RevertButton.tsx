import { useState } from "react";
import type { ChangeState } from "../api/types";
import { useChangesApi } from "../lib/changes";

const STATES: Record<ChangeState, string> = { applied: "", reverted: "Reverted", changed_since: "Changed since" };

/**
 * "Revert" for kept changes (`ids`), with where they stand. A refusal (the file changed
 * since) shows its reason here, and nothing is written.
 */
export function RevertButton({ ids, state, what }: { ids: string[]; state: ChangeState; what: string }) {
  const api = useChangesApi();
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string | null>(null);
  if (!api) return null;
  const revert = async () => {
    setBusy(true);
    setRefused(await api.revert(ids));
    setBusy(false);
  };
  return (
    <div className="revert-bar" data-testid="revert-bar">
      {/* The button comes first: the state beside it follows the file on disk and may
          appear or go at any moment, and must not move the button under the pointer. */}
      {state !== "reverted" && (
        <button type="button" data-testid="revert-change" disabled={busy || ids.length === 0} aria-label={`Revert ${what}`} onClick={() => void revert()}>
          Revert
        </button>
      )}
      {STATES[state] && (
        <span className={`change-state ${state}`} data-testid="change-state" title={state === "changed_since" ? "The file was edited after this change" : undefined}>
          {STATES[state]}
        </span>
      )}
      {refused && (
        <p className="notice error" role="alert" data-testid="revert-error">
          {refused}
        </p>
      )}
    </div>
  );
}
