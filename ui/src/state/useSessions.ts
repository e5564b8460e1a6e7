// The sessions list and the open session.
import { useCallback, useMemo, useRef, useState } from "react";
import type { Backend } from "../api/backend";
import { toAppError } from "../api/errors";
import type { SessionSummary, SessionView } from "../api/types";
import type { Notify } from "./useToasts";

export interface Sessions {
  list: SessionSummary[];
  current: SessionView | null;
  setCurrent(view: SessionView): void;
  boot(): Promise<void>;
  refresh(): void;
  open(id: string | null): void;
  create(): void;
  rename(id: string, title: string): void;
  remove(id: string): void;
}

/** `first`: the list and the open session as the first screen shows them, when known. */
export function useSessions(backend: Backend, notify: Notify, first?: { sessions: SessionSummary[]; session: SessionView | null } | null): Sessions {
  const [list, setList] = useState<SessionSummary[]>(() => first?.sessions ?? []);
  const [current, setCurrentState] = useState<SessionView | null>(() => first?.session ?? null);
  const currentRef = useRef<SessionView | null>(first?.session ?? null);
  const setCurrent = useCallback((view: SessionView) => {
    currentRef.current = view;
    setCurrentState(view);
  }, []);
  const fail = useCallback((e: unknown) => notify(toAppError(e)), [notify]);

  const refresh = useCallback(() => {
    backend.listSessions().then(setList).catch(fail);
  }, [backend, fail]);

  const openNow = useCallback(
    async (id: string | null) => {
      try {
        setCurrent(await backend.openSession(id));
      } catch (e) {
        fail(e);
      }
    },
    [backend, fail, setCurrent],
  );

  const boot = useCallback(async () => {
    const l = await backend.listSessions();
    setList(l);
    await openNow(l[0]?.id ?? null);
  }, [backend, openNow]);

  const create = useCallback(() => {
    // An empty session is already a new one.
    if (currentRef.current && currentRef.current.items.length === 0) return;
    void openNow(null);
  }, [openNow]);

  const rename = useCallback(
    (id: string, title: string) => {
      setList((l) => l.map((s) => (s.id === id ? { ...s, title } : s)));
      if (currentRef.current?.id === id) setCurrent({ ...currentRef.current, title });
      backend
        .renameSession(id, title)
        .catch(fail)
        .finally(refresh);
    },
    [backend, fail, refresh, setCurrent],
  );

  const remove = useCallback(
    (id: string) => {
      backend
        .deleteSession(id)
        .then(async () => {
          const rest = await backend.listSessions();
          setList(rest);
          if (currentRef.current?.id === id) await openNow(rest[0]?.id ?? null);
        })
        .catch(fail);
    },
    [backend, fail, openNow],
  );

  // A new session is listed before its first message reaches the store.
  const shown = useMemo(
    () => (current && !list.some((s) => s.id === current.id) ? [{ id: current.id, title: current.title, updated_ms: Date.now(), messages: 0 }, ...list] : list),
    [current, list],
  );

  const open = useCallback((id: string | null) => void openNow(id), [openNow]);
  return { list: shown, current, setCurrent, boot, refresh, open, create, rename, remove };
}
