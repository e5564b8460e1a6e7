import { useState, type KeyboardEvent } from "react";
import type { BranchSiblings, Picture } from "../api/types";
import { copyText } from "../lib/markdown";
import type { ToolCallState } from "../state/run";
import { Icon } from "./Icon";
import { Markdown } from "./Markdown";
import { PictureStrip } from "./Pictures";
import { ToolCallCard } from "./ToolCallCard";
import type { ApprovalDecision } from "../api/types";

export interface UserActions {
  /** `pictures`: the message's own, which go with the new version. */
  onEdit(entryId: string, text: string, pictures: Picture[]): void;
  onRetry(entryId: string, text: string, pictures: Picture[]): void;
  /** `summarize`: a summary of the branch left is kept where the conversation goes on. */
  onSwitch(entryId: string, summarize: boolean): void;
}

function BranchSwitcher({ siblings, onSwitch, disabled }: { siblings: BranchSiblings; onSwitch(id: string, summarize: boolean): void; disabled: boolean }) {
  const { ids, index } = siblings;
  const [summarize, setSummarize] = useState(false);
  const go = (i: number) => {
    const id = ids[i];
    if (id) onSwitch(id, summarize);
  };
  return (
    <span className="branch-switcher" aria-label="Versions of this message">
      <button type="button" className="icon-button small" data-testid="branch-prev" aria-label="Previous version" disabled={disabled || index <= 0} onClick={() => go(index - 1)}>
        <Icon name="chevronLeft" size={14} />
      </button>
      <span className="branch-pos">
        {index + 1}/{ids.length}
      </span>
      <button type="button" className="icon-button small" data-testid="branch-next" aria-label="Next version" disabled={disabled || index >= ids.length - 1} onClick={() => go(index + 1)}>
        <Icon name="chevronRight" size={14} />
      </button>
      <button
        type="button"
        className={summarize ? "branch-summary on" : "branch-summary"}
        data-testid="branch-summary"
        aria-pressed={summarize}
        disabled={disabled}
        title="Switching keeps a summary of the version you leave (what was tried and decided there), so the conversation from here knows it"
        onClick={() => setSummarize(!summarize)}
      >
        with summary
      </button>
    </span>
  );
}

export function UserMessage({
  entryId,
  text,
  pictures,
  siblings,
  busy,
  actions,
}: {
  entryId: string | null;
  text: string;
  /** The pictures sent with it (older pages' sessions may lack the field). */
  pictures: Picture[] | undefined;
  siblings: BranchSiblings | null;
  busy: boolean;
  actions: UserActions;
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(text);
  const shown = pictures ?? [];

  const submit = () => {
    if (!entryId || (!draft.trim() && shown.length === 0)) return;
    setEditing(false);
    actions.onEdit(entryId, draft, shown);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      setEditing(false);
    }
  };

  return (
    <div className="message user" data-testid="message-user" data-entry={entryId ?? undefined}>
      {editing && (
        <div className="message-editor">
          <textarea aria-label="Edit message" value={draft} autoFocus rows={Math.min(10, draft.split("\n").length + 1)} onChange={(e) => setDraft(e.target.value)} onKeyDown={onKey} />
          <div className="row end">
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <button type="button" className="primary" onClick={submit} disabled={!draft.trim() && shown.length === 0}>
              Send as new branch
            </button>
          </div>
        </div>
      )}
      <PictureStrip pictures={shown} />
      {!editing && (text || shown.length === 0) && <div className="bubble">{text}</div>}
      {entryId && !editing && (
        <div className="message-actions">
          {siblings && siblings.ids.length > 1 && <BranchSwitcher siblings={siblings} onSwitch={actions.onSwitch} disabled={busy} />}
          <button
            type="button"
            className="icon-button small"
            data-testid="edit-message"
            aria-label="Edit message"
            title="Edit (makes a new branch)"
            disabled={busy}
            onClick={() => {
              setDraft(text);
              setEditing(true);
            }}
          >
            <Icon name="edit" size={14} />
          </button>
          <button type="button" className="icon-button small" data-testid="retry-message" aria-label="Retry" title="Send again (makes a new branch)" disabled={busy} onClick={() => actions.onRetry(entryId, text, shown)}>
            <Icon name="retry" size={14} />
          </button>
        </div>
      )}
    </div>
  );
}

/**
 * The model's reasoning, folded. While the model is still reasoning (no answer yet) it is
 * open, so the wait shows what goes on; once the answer starts it folds. A click decides
 * from then on.
 */
export function Thinking({ text, live }: { text: string; live: boolean }) {
  const [chosen, setChosen] = useState<boolean | null>(null);
  const open = chosen ?? live;
  const words = text.trim() ? text.trim().split(/\s+/).length : 0;
  return (
    <details
      className={live ? "thinking live" : "thinking"}
      data-testid="thinking"
      open={open}
      onToggle={(e) => {
        const now = (e.currentTarget as HTMLDetailsElement).open;
        if (now !== open) setChosen(now);
      }}
    >
      <summary>
        {live ? "Thinking…" : "Thinking"}
        <span className="muted small"> · {words === 1 ? "1 word" : `${words} words`}</span>
      </summary>
      {open && (
        <div className="thinking-text">
          <Markdown text={text} />
        </div>
      )}
    </details>
  );
}

export function AssistantMessage({
  text,
  thinking = "",
  tools,
  streaming,
  stop,
  onDecide,
}: {
  text: string;
  /** The reasoning before the answer, when the model showed any. */
  thinking?: string;
  tools: ToolCallState[];
  streaming: boolean;
  stop: string | null;
  onDecide?: (requestId: string, decision: ApprovalDecision) => void;
}) {
  const [copied, setCopied] = useState(false);
  const reasoning = thinking.trim() !== "";
  return (
    <div className={streaming ? "message assistant streaming" : "message assistant"} data-testid="message-assistant" aria-busy={streaming}>
      {reasoning && <Thinking text={thinking} live={streaming && !text && tools.length === 0} />}
      {(text || (streaming && !reasoning)) && <Markdown text={text} />}
      {streaming && !text && !reasoning && <span className="typing" aria-label="Thinking" />}
      {tools.map((t) => (
        <ToolCallCard key={t.call_id} tool={t} onDecide={onDecide} />
      ))}
      {stop && <div className="stop-note">{stop === "aborted" ? "Stopped." : stop === "max_tokens" ? "Cut off: the answer reached the length limit." : `Ended: ${stop}`}</div>}
      {!streaming && text && (
        <div className="message-actions">
          <button
            type="button"
            className="icon-button small"
            aria-label="Copy message"
            title={copied ? "Copied" : "Copy"}
            onClick={() =>
              void copyText(text).then((ok) => {
                setCopied(ok);
                window.setTimeout(() => setCopied(false), 1500);
              })
            }
          >
            <Icon name="copy" size={14} />
          </button>
          {copied && <span className="muted small">Copied</span>}
        </div>
      )}
    </div>
  );
}
