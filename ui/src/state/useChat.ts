// Runs from the page's side: starts them, feeds their events to the run reducer and loads the
// session again after agent_end so entry ids are the store's.
import { useCallback, useEffect, useMemo, useReducer, useRef } from "react";
import { flushSync } from "react-dom";
import type { Backend, Listener } from "../api/backend";
import { toAppError } from "../api/errors";
import type { AppError, ApprovalDecision, Picture, RunEvent, SessionView } from "../api/types";
import { initialRunState, runReducer, type RunState } from "./run";

export interface ChatActions {
  /** Sends a message, with the pictures kept for it. */
  send(text: string, pictures?: Picture[]): void;
  steer(text: string): void;
  /** Queues a follow-up in the core (sent where the run would end; it then goes on). */
  followUp(text: string): void;
  /** Drops the waiting follow-up at `index`. */
  dropFollowUp(index: number): void;
  abort(): void;
  approve(requestId: string, decision: ApprovalDecision): void;
  /** `pictures`: the message's own, shown with the new version (the backend sends them again). */
  edit(entryId: string, text: string, pictures?: Picture[]): void;
  retry(entryId: string, text: string, pictures?: Picture[]): void;
  switchBranch(entryId: string, summarize?: boolean): void;
  /** Shows the run going on, if any (the page was loaded again while it ran). */
  takeUp(): Promise<boolean>;
  /** Goes on with the session's run that was cut short (a crash, a closed window). */
  resume(): void;
}

export function useChat(
  backend: Backend,
  session: SessionView | null,
  setSession: (view: SessionView) => void,
  hooks: { notify(e: AppError): void; onRunEnd(): void },
): [RunState, ChatActions] {
  const [run, dispatch] = useReducer(runReducer, initialRunState);
  const runRef = useRef(run);
  runRef.current = run;
  const sessionRef = useRef(session);
  sessionRef.current = session;
  const hooksRef = useRef(hooks);
  hooksRef.current = hooks;
  const started = useRef(false);
  // The session the run was started from (a new session may get its id from the store).
  const runFrom = useRef<string | null>(null);

  // Another session was opened: forget the live items of the previous one (not those of
  // the run this session was opened for).
  const sessionId = session?.id ?? null;
  useEffect(() => {
    if (runRef.current.running && sessionId === runFrom.current) return;
    dispatch({ type: "reset" });
  }, [sessionId]);

  const reload = useCallback(
    async (id: string) => {
      hooksRef.current.onRunEnd();
      const current = sessionRef.current?.id;
      if (current !== id && current !== runFrom.current) return; // another session was opened meanwhile
      try {
        setSession(await backend.openSession(id));
      } catch (e) {
        hooksRef.current.notify(toAppError(e));
      }
      dispatch({ type: "settled", sessionId: id });
    },
    [backend, setSession],
  );

  const listener: Listener<RunEvent> = useCallback(
    (event) => {
      if (event.type === "agent_start") started.current = true;
      // Text is rendered in the task that brought it, so it is in the next frame painted
      // (a render left to React's scheduler can miss that frame and wait for the one after).
      if (event.type === "message_delta" || event.type === "thinking_delta") flushSync(() => dispatch({ type: "event", event }));
      else dispatch({ type: "event", event });
      if (event.type === "agent_end") void reload(event.session_id);
    },
    [reload],
  );

  const start = useCallback(
    async (text: string | null, pictures: Picture[], cutAt: string | null, call: (l: Listener<RunEvent>) => Promise<void>) => {
      const s = sessionRef.current;
      if (!s) return;
      started.current = false;
      runFrom.current = s.id;
      dispatch({ type: "begin", sessionId: s.id, text, pictures, cutAt, now: Date.now() });
      try {
        await call(listener);
      } catch (e) {
        const err = toAppError(e);
        if (!started.current) dispatch({ type: "start_failed", error: err });
        else hooksRef.current.notify(err);
      }
    },
    [listener],
  );

  const takeUp = useCallback(async () => {
    // Events can come before the answer: keep them until the run is set up.
    const early: RunEvent[] = [];
    let ready = false;
    const view = await backend.attachRun((event) => (ready ? listener(event) : early.push(event)));
    if (!view) return false;
    started.current = true;
    runFrom.current = view.id;
    dispatch({ type: "begin", sessionId: view.id, text: null, cutAt: null, now: Date.now() });
    setSession(view);
    ready = true;
    early.forEach(listener);
    return true;
  }, [backend, listener, setSession]);

  const actions = useMemo<ChatActions>(
    () => ({
      send: (text, pictures = []) =>
        void start(text, pictures, null, (l) => (pictures.length ? backend.sendMessage(text, l, pictures) : backend.sendMessage(text, l))),
      edit: (entryId, text, pictures = []) => void start(text, pictures, entryId, (l) => backend.editMessage(entryId, text, l)),
      retry: (entryId, text, pictures = []) => void start(text, pictures, entryId, (l) => backend.retry(entryId, l)),
      steer: (text) => {
        dispatch({ type: "steer", text });
        backend.steer(text).catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      followUp: (text) => {
        backend.followUp(text).catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      dropFollowUp: (index) => {
        backend.takeFollowUp(index).catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      abort: () => {
        backend.abort().catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      approve: (requestId, decision) => {
        dispatch({ type: "approval_sent", request_id: requestId, decision });
        backend.resolveApproval(requestId, decision).catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      switchBranch: (entryId, summarize = false) => {
        backend
          .switchBranch(entryId, summarize)
          .then(setSession)
          .catch((e: unknown) => hooksRef.current.notify(toAppError(e)));
      },
      takeUp,
      resume: () => void start(null, [], null, (l) => backend.resumeRun(l)),
    }),
    [backend, start, setSession, takeUp],
  );

  return [run, actions];
}
