import { Fragment, useEffect, useState } from "react";
import type { ApprovalDecision } from "../api/types";
import type { ToolCallState, ToolStatus } from "../state/run";
import { useChangesApi } from "../lib/changes";
import { ChangeDiff } from "./ChangeDiff";
import { Icon } from "./Icon";
import { PictureStrip } from "./Pictures";
import { RevertButton } from "./RevertButton";
import { showHidden } from "../lib/invisible";

const LABELS: Record<ToolStatus, string> = {
  running: "running",
  approval: "waiting for approval",
  done: "done",
  error: "error",
  denied: "denied",
};

/** Results longer than this show their start until asked (arguments always show whole). */
const SHOWN = 20_000;

/**
 * How long the decision buttons stay disabled after a request appears, so that a click
 * meant for whatever was under the pointer a moment before does not answer it.
 */
export const APPROVAL_ARM_MS = 500;

export function prettyJson(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** A one-line hint of what the call does: its first short string argument. */
function brief(args: unknown): string {
  if (!args || typeof args !== "object") return typeof args === "string" ? args.slice(0, 80) : "";
  for (const v of Object.values(args as Record<string, unknown>)) {
    if (typeof v === "string" && v.trim()) return v.replace(/\s+/g, " ").slice(0, 80);
  }
  return "";
}

function LongText({ text, className }: { text: string; className: string }) {
  const [all, setAll] = useState(false);
  const cut = !all && text.length > SHOWN;
  return (
    <>
      <pre className={className}>{cut ? `${text.slice(0, SHOWN)}\n…` : text}</pre>
      {cut && (
        <button type="button" className="link-button" onClick={() => setAll(true)}>
          Show all ({text.length.toLocaleString("en-US")} characters)
        </button>
      )}
    </>
  );
}

/** Text with `backticked` parts shown as code (scopes such as "bash commands starting with `git status`"). */
function WithCode({ text }: { text: string }) {
  return (
    <>
      {text.split("`").map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}

/** True once `key` (a request id) has been shown for `ms`; false again for a new key. */
function useArmed(key: string | null, ms: number): boolean {
  const [armed, setArmed] = useState<string | null>(null);
  useEffect(() => {
    if (key === null) return;
    const timer = window.setTimeout(() => setArmed(key), ms);
    return () => window.clearTimeout(timer);
  }, [key, ms]);
  return key !== null && armed === key;
}

/**
 * The question and its buttons. Nothing here takes the focus: a request that arrives while
 * the user types in the composer or the editor is answered only by a click, or by keys
 * after the user moved the focus here.
 */
function ApprovalBar({ tool, onDecide }: { tool: ToolCallState; onDecide(decision: ApprovalDecision): void }) {
  const armed = useArmed(tool.request_id, APPROVAL_ARM_MS);
  return (
    <div className="approval-bar" role="group" aria-label={`Approve ${tool.asked_by?.name ?? tool.name}`} data-testid="approval-bar">
      {tool.reason && (
        <p className="approval-reason" data-testid="approval-reason">
          <Icon name="alert" size={14} /> <WithCode text={tool.reason} />
        </p>
      )}
      {tool.asked_by && (
        <pre className="tool-args" data-testid="asked-args">
          {showHidden(JSON.stringify(tool.asked_by.arguments, null, 2))}
        </pre>
      )}
      <span className="approval-question">
        {tool.asked_by ? (
          <>
            Allow the subagent {tool.asked_by.via} to run <strong>{tool.asked_by.name}</strong>?
          </>
        ) : (
          <>
            Allow Cairn to run <strong>{tool.name}</strong>?
          </>
        )}
      </span>
      <div className="approval-buttons">
        <button type="button" className="primary" data-testid="approval-allow-once" disabled={!armed} onClick={() => onDecide("allow_once")}>
          Allow once
        </button>
        {tool.always && (
          <button type="button" data-testid="approval-allow-always" disabled={!armed} onClick={() => onDecide("allow_always")}>
            Always allow: <WithCode text={tool.always} />
          </button>
        )}
        <button type="button" className="danger" data-testid="approval-deny" disabled={!armed} onClick={() => onDecide("deny")}>
          Deny
        </button>
      </div>
    </div>
  );
}

export function ToolCallCard({
  tool,
  onDecide,
}: {
  tool: ToolCallState;
  onDecide?: (requestId: string, decision: ApprovalDecision) => void;
}) {
  const asking = tool.status === "approval" && tool.request_id !== null;
  const [open, setOpen] = useState(asking);
  useEffect(() => {
    if (asking) setOpen(true);
  }, [asking]);

  const decide = (decision: ApprovalDecision) => {
    if (tool.request_id && onDecide) onDecide(tool.request_id, decision);
  };
  // The change the call made, once kept; before that, the one it would make.
  const made = useChangesApi()?.forCall(tool.call_id) ?? null;
  const change = made ?? tool.change;
  const output = tool.result ?? (tool.output || null);
  // While a call asks, everything it would do is shown.
  const shown = open || asking;

  return (
    <div className={`tool-card status-${tool.status}`} data-testid="tool-card" data-status={tool.status} data-tool={tool.name}>
      <button type="button" className="tool-head" aria-expanded={shown} disabled={asking} onClick={() => setOpen(!open)}>
        <span className={`status-dot ${tool.status}`} aria-hidden="true" />
        <span className="tool-name">{tool.name}</span>
        <span className="tool-brief">{showHidden(brief(tool.arguments))}</span>
        <span className="tool-status">{made?.state === "reverted" ? "reverted" : LABELS[tool.status]}</span>
        <Icon name={shown ? "chevronDown" : "chevronRight"} size={14} />
      </button>
      {tool.pictures.length > 0 && (
        <div className="tool-pictures">
          <PictureStrip pictures={tool.pictures} />
        </div>
      )}
      {asking && <ApprovalBar tool={tool} onDecide={decide} />}
      {shown && (
        <div className="tool-body">
          {change && <ChangeDiff change={change} />}
          {made && <RevertButton ids={[made.id]} state={made.state} what={`this change to ${made.path}`} />}
          <div className="tool-label">Arguments</div>
          <pre className="tool-args" data-testid="tool-args">
            {showHidden(prettyJson(tool.arguments)) || "(none)"}
          </pre>
          {output !== null && (
            <>
              <div className="tool-label">{tool.result === null ? "Output so far" : "Result"}</div>
              <LongText className={tool.status === "error" || tool.status === "denied" ? "tool-result is-error" : "tool-result"} text={output} />
            </>
          )}
        </div>
      )}
    </div>
  );
}
