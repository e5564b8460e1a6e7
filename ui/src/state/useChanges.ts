// The open session's kept changes: loaded when the session changes, when a run's write
// ends and when files change on disk (their states follow the files).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Backend } from "../api/backend";
import { toAppError } from "../api/errors";
import type { AgentChange } from "../api/types";
import type { ChangesApi } from "../lib/changes";
import type { EventHub } from "../lib/hub";

/** `bump`: anything that changes when the run may have changed a file. */
export function useChanges(backend: Backend, hub: EventHub, sessionId: string | null, bump: unknown): ChangesApi {
  const [list, setList] = useState<AgentChange[]>([]);
  const asked = useRef(0);

  const load = useCallback(() => {
    const seq = ++asked.current;
    if (!sessionId) {
      setList([]);
      return;
    }
    backend
      .listChanges(sessionId)
      .then((l) => seq === asked.current && setList(l))
      // Reviewing is a convenience: the chat goes on without it.
      .catch(() => seq === asked.current && setList([]));
  }, [backend, sessionId]);

  useEffect(load, [load, bump]);
  useEffect(
    () =>
      hub.on((e) => {
        if (e.type === "file_changed" || e.type === "files_changed") load();
      }),
    [hub, load],
  );

  const revert = useCallback(
    async (ids: string[]) => {
      if (!sessionId) return "no session is open";
      try {
        await backend.revertChanges(sessionId, ids);
        return null;
      } catch (e) {
        return toAppError(e).message;
      } finally {
        load();
      }
    },
    [backend, sessionId, load],
  );

  return useMemo(() => {
    const byCall = new Map(list.map((c) => [c.call_id, c]));
    return { list, forCall: (id: string) => byCall.get(id) ?? null, revert };
  }, [list, revert]);
}
