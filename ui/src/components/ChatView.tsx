import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { AppInfo, ApprovalDecision, Outcome, SessionView, ToolCallView, TranscriptItem } from "../api/types";
import type { LiveItem, RunState, ToolCallState } from "../state/run";
import { toolCall, visibleStop } from "../state/run";
import { counted } from "../lib/time";
import type { ChatActions } from "../state/useChat";
import { Composer } from "./Composer";
import { PictureViewer } from "./Pictures";
import { AssistantMessage, UserMessage, type UserActions } from "./MessageView";
import { Welcome } from "./Welcome";
import type { Notify } from "../state/useToasts";

function toolState(c: ToolCallView, running: boolean): ToolCallState {
  const status = c.result === null ? (running ? "running" : "error") : c.result.is_error ? "error" : "done";
  const result = c.result?.content ?? (running ? null : "Not run.");
  return { ...toolCall(c.call_id, c.name, c.arguments), status, result, pictures: c.result?.pictures ?? [] };
}

function Divider({ children, detail }: { children: ReactNode; detail?: string }) {
  return (
    <div className="divider" role="separator">
      <span>{children}</span>
      {detail && (
        <details>
          <summary>Show summary</summary>
          <p>{detail}</p>
        </details>
      )}
    </div>
  );
}


/** One row of the stored transcript (memoised: streaming does not re-render the history). */
const TranscriptEntry = memo(function TranscriptEntry({
  item: it,
  busy,
  sessionRunning,
  actions,
}: {
  item: TranscriptItem;
  busy: boolean;
  sessionRunning: boolean;
  actions: UserActions;
}) {
  switch (it.kind) {
    case "user":
      return <UserMessage entryId={it.entry_id} text={it.text} pictures={it.pictures} siblings={it.siblings} busy={busy} actions={actions} />;
    case "assistant":
      return <AssistantMessage text={it.text} thinking={it.thinking ?? ""} streaming={false} stop={visibleStop(it.stop)} tools={it.tool_calls.map((c) => toolState(c, sessionRunning))} />;
    case "summary":
      return <Divider detail={it.text}>{it.what === "compaction" ? "Earlier messages were summarised to save room" : "Summary of the branch left behind"}</Divider>;
  }
});

/** One row the running (or just finished) run added. */
const LiveEntry = memo(function LiveEntry({
  item: it,
  busy,
  actions,
  onDecide,
  onOpenFile,
}: {
  item: LiveItem;
  busy: boolean;
  actions: UserActions;
  onDecide(requestId: string, decision: ApprovalDecision): void;
  onOpenFile(path: string): void;
}) {
  switch (it.kind) {
    case "user":
      return <UserMessage entryId={busy ? null : it.entry_id} text={it.text} pictures={it.pictures} siblings={null} busy={busy} actions={actions} />;
    case "assistant":
      return <AssistantMessage text={it.text} thinking={it.thinking} streaming={it.streaming} stop={it.stop} tools={it.tools} onDecide={onDecide} />;
    case "notice":
      return (
        <div className={`notice ${it.level}`} role={it.level === "error" ? "alert" : "status"}>
          {it.text}
        </div>
      );
    case "compaction":
      return (
        <Divider>
          {it.done && it.tokens_before !== null && it.tokens_after !== null
            ? `Compacted the conversation: ${Math.round(it.tokens_before / 1000)}k → ${Math.round(it.tokens_after / 1000)}k tokens`
            : it.background
              ? "Summarising earlier messages in the background…"
              : "Compacting the conversation…"}
        </Divider>
      );
    case "flushed":
      return (
        <div className="flushed">
          Saved {counted(it.bullets, "note", "notes")} to{" "}
          <button type="button" className="link-button" onClick={() => onOpenFile(it.path)}>
            {it.path}
          </button>
        </div>
      );
  }
});

/** How much a live row holds, so the transcript knows when the conversation grew. */
function sizeOf(item: LiveItem | undefined): string {
  if (!item) return "";
  switch (item.kind) {
    case "assistant":
      return [item.text.length, item.thinking.length, item.stop ?? "", ...item.tools.map((t) => `${t.status}:${t.request_id ?? ""}:${t.output.length}:${t.result?.length ?? -1}`)].join(",");
    case "compaction":
      return `${item.done}`;
    default:
      return "";
  }
}

/** No follow-ups (one array, so the message box is not drawn again for a new empty one). */
const NONE_QUEUED: string[] = [];

/** How many stored rows a session opens with; scrolling to the top shows this many more.
 * Thirty rows fill the view several times over; each one more is drawn at the start. */
export const HISTORY_PAGE = 30;
/** Distance from the top (px) at which earlier rows are brought in. */
const NEAR_TOP = 400;

function outcomeText(o: Outcome): string | null {
  switch (o.kind) {
    case "completed":
      return null;
    case "aborted":
      return "Stopped.";
    case "blocked":
      return `Blocked: ${o.reason}`;
    case "max_steps":
      return `Stopped after ${o.steps} steps, the limit for one run.`;
    case "stalled":
      return o.detail ? `Stopped going round in circles: ${o.detail}.` : `Stopped: ${o.tool} was called ${o.repeats} times with the same arguments.`;
    case "failed":
      return o.error.message || "The run failed.";
  }
}

export function ChatView({
  info,
  session,
  run,
  chat,
  onOpenFile,
  onOpenSettings,
  notify,
}: {
  info: AppInfo | null;
  session: SessionView | null;
  run: RunState;
  chat: ChatActions;
  onOpenFile(path: string): void;
  onOpenSettings(): void;
  /** Tells the user what went wrong (a picture refused ...). */
  notify: Notify;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const busy = run.running;
  const ours = session !== null && run.details.sessionId === session.id;
  const failedText = ours && !busy && run.details.outcome?.kind === "failed" ? run.details.outcome.error.message : null;
  // The failure shows once, in the outcome line with its Retry, not also as a notice.
  const live = ours ? run.items.filter((it) => !(it.kind === "notice" && it.level === "error" && it.text === failedText)) : [];

  let base: TranscriptItem[] = session?.items ?? [];
  if (ours && run.cutAt) {
    const at = base.findIndex((it) => it.entry_id === run.cutAt);
    if (at >= 0) base = base.slice(0, at);
  }
  const lastUser = [...(session?.items ?? [])].reverse().find((it) => it.kind === "user");

  // Long sessions open with their latest rows; earlier ones come in as the user scrolls up.
  const shownId = session?.id;
  const [windowed, setWindowed] = useState({ id: shownId, count: HISTORY_PAGE });
  const count = windowed.id === shownId ? windowed.count : HISTORY_PAGE;
  const hidden = Math.max(0, base.length - count);
  const anchor = useRef<number | null>(null);
  const showEarlier = () => {
    const el = scroller.current;
    if (el) anchor.current = el.scrollHeight - el.scrollTop;
    setWindowed({ id: shownId, count: count + HISTORY_PAGE });
  };

  const userActions = useMemo<UserActions>(() => ({ onEdit: chat.edit, onRetry: chat.retry, onSwitch: chat.switchBranch }), [chat]);

  // Follow the end of the conversation as it grows, unless the user scrolled up; a newly opened session starts
  // at its end. Only the conversation growing moves the view: a card the user opened, or the app drawing again
  // for something else (a file changed on disk), never scrolls it under the pointer. Rows brought in above keep
  // what the user was reading where it was.
  const outcome = ours && !busy ? run.details.outcome : null;
  const outcomeMessage = outcome ? outcomeText(outcome) : null;
  // A session opened afresh says how its last run ended (kept in the session), unless it
  // simply completed.
  const kept = !ours && !busy && !session?.running && session?.last_run?.outcome.kind !== "completed" ? (session?.last_run ?? null) : null;
  const growth = `${shownId}|${base.length}|${count}|${live.length}|${sizeOf(live[live.length - 1])}|${busy}|${outcomeMessage ?? ""}`;
  const followed = useRef<string | null>(null);
  // While a run goes on, following waits for the next frame (it runs before the paint):
  // several deltas come per frame, and reading the height after each would lay the page out
  // each time. `followedTo` is where following put the view.
  const follow = useRef<number | null>(null);
  const followedTo = useRef<number | null>(null);
  const stopFollowing = () => {
    if (follow.current !== null) cancelAnimationFrame(follow.current);
    follow.current = null;
  };
  useEffect(() => stopFollowing, []);
  useLayoutEffect(() => {
    pinned.current = true;
  }, [shownId]);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const grew = followed.current !== growth;
    followed.current = growth;
    if (anchor.current !== null) {
      stopFollowing();
      el.scrollTop = el.scrollHeight - anchor.current;
      anchor.current = null;
    } else if (pinned.current && grew) {
      if (busy && typeof requestAnimationFrame === "function") {
        follow.current ??= requestAnimationFrame(() => {
          follow.current = null;
          if (!pinned.current || anchor.current !== null) return;
          el.scrollTop = el.scrollHeight;
          followedTo.current = el.scrollTop;
        });
      } else {
        stopFollowing();
        el.scrollTop = el.scrollHeight;
        followedTo.current = el.scrollTop;
      }
    }
  });

  // A run that ended stored its user message (retry it); one that never started did not (send again).
  const retryFailed = () => {
    if (run.details.summary && lastUser?.kind === "user") chat.retry(lastUser.entry_id, lastUser.text, lastUser.pictures);
    else if (run.details.prompt !== null) chat.send(run.details.prompt, run.details.pictures);
  };
  const empty = base.length === 0 && live.length === 0;

  return (
    <PictureViewer>
      <section className="chat" aria-label="Conversation">
        <div
          className="transcript"
          ref={scroller}
          role="log"
          aria-live="polite"
          onScroll={(e) => {
            const el = e.currentTarget;
            // Following moved the view there, and more text came before the event (the next
            // frame follows it): the view still follows.
            const own = pinned.current && el.scrollTop === followedTo.current;
            if (!own) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
            if (hidden > 0 && el.scrollTop < NEAR_TOP && anchor.current === null) showEarlier();
          }}
        >
          <div className="transcript-inner">
            {empty && !outcomeMessage ? (
              <Welcome info={info} onOpenSettings={onOpenSettings} />
            ) : (
              <>
                {hidden > 0 && (
                  <button type="button" className="show-earlier link-button" data-testid="show-earlier" onClick={showEarlier}>
                    Show earlier messages ({hidden} more)
                  </button>
                )}
                {(hidden > 0 ? base.slice(hidden) : base).map((it) => (
                  <TranscriptEntry key={it.entry_id} item={it} busy={busy} sessionRunning={session?.running ?? false} actions={userActions} />
                ))}
                {live.map((it) => (
                  <LiveEntry key={it.key} item={it} busy={busy} actions={userActions} onDecide={chat.approve} onOpenFile={onOpenFile} />
                ))}
              </>
            )}
            {kept && !empty && (
              <div className={kept.outcome.kind === "failed" ? "outcome failed" : "outcome"} role="status" data-testid="last-run">
                <span>{`${kept.said.charAt(0).toUpperCase()}${kept.said.slice(1)}.`}</span>
              </div>
            )}
            {outcome && outcomeMessage && (
              <div className={outcome.kind === "failed" ? "outcome failed" : "outcome"} role={outcome.kind === "failed" ? "alert" : "status"}>
                <span>{outcomeMessage}</span>
                {outcome.kind === "failed" && (
                  <button type="button" onClick={retryFailed}>
                    Retry
                  </button>
                )}
              </div>
            )}
          </div>
        </div>
        {session?.interrupted && !busy && (
          <div className="resume-bar" role="status" data-testid="resume-bar">
            <span>
              {session.interrupted.steps === 0
                ? "The last run was cut short before its first answer"
                : `The last run was cut short after ${session.interrupted.steps} model ${session.interrupted.steps === 1 ? "call" : "calls"}`}
              {session.interrupted.queued.length > 0 && `, with ${session.interrupted.queued.length} follow-up${session.interrupted.queued.length === 1 ? "" : "s"} waiting`}.
            </span>
            <button type="button" className="primary" data-testid="resume-button" onClick={chat.resume}>
              Resume the interrupted run
            </button>
          </div>
        )}
        <Composer
          running={busy}
          disabled={!session}
          focusKey={session?.id ?? null}
          onSend={chat.send}
          onSteer={chat.steer}
          onStop={chat.abort}
          queued={ours ? run.followUps : NONE_QUEUED}
          returned={run.returned}
          onQueue={chat.followUp}
          onDrop={chat.dropFollowUp}
          queueMode={info?.follow_up_mode ?? "all"}
          notify={notify}
        />
      </section>
    </PictureViewer>
  );
}
