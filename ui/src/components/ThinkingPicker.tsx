import { memo, useEffect, useState } from "react";
import { toAppError } from "../api/errors";
import type { ThinkingLevel } from "../api/types";
import { useBackend } from "../lib/backendContext";
import type { Notify } from "../state/useToasts";

const LEVELS: ThinkingLevel[] = ["off", "low", "medium", "high"];

/**
 * The thinking chip beside the model chip: how much the model of the open session
 * reasons before it answers. A choice applies from the next model call and is recorded
 * in the session; a model that cannot take it says so in a notice and answers without.
 */
export const ThinkingPicker = memo(function ThinkingPicker({ sessionId, level, notify }: { sessionId: string | null; level: ThinkingLevel | null; notify: Notify }) {
  const backend = useBackend();
  const [chosen, setChosen] = useState<ThinkingLevel | null>(level);
  useEffect(() => setChosen(level), [sessionId, level]);

  const choose = (next: ThinkingLevel) => {
    const was = chosen;
    setChosen(next);
    backend.setThinking(next).catch((e: unknown) => {
      setChosen(was);
      notify(toAppError(e));
    });
  };

  return (
    <select
      className="thinking-chip"
      data-testid="thinking-level"
      aria-label="Thinking level"
      title="How much the model reasons before it answers (this session)"
      value={chosen ?? ""}
      disabled={!sessionId}
      onChange={(e) => choose(e.target.value as ThinkingLevel)}
    >
      {chosen === null && (
        <option value="" disabled>
          thinking: auto
        </option>
      )}
      {LEVELS.map((l) => (
        <option key={l} value={l}>
          thinking: {l}
        </option>
      ))}
    </select>
  );
});
