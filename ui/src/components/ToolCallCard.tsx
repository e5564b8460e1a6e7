import { useEffect, useRef, useState } from "react";
import type { ApprovalDecision } from "../api/types";
import type { ToolCallState, ToolStatus } from "../state/run";
import { Icon } from "./Icon";

const LABELS: Record<ToolStatus, string> = {
  running: "running",
  approval: "waiting for approval",
  done: "done",
  error: "error",
  denied: "denied",
};

const SHOWN = 20_000;

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

export function ToolCallCard({
  tool,
  onDecide,
}: {
  tool: ToolCallState;
  onDecide?: (requestId: string, decision: ApprovalDecision) => void;
}) {
  const asking = tool.status === "approval" && tool.request_id !== null;
  const [open, setOpen] = useState(asking);
  const allowRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (asking) {
      setOpen(true);
      allowRef.current?.focus();
    }
  }, [asking]);

  const decide = (decision: ApprovalDecision) => {
    if (tool.request_id && onDecide) onDecide(tool.request_id, decision);
  };
  const output = tool.result ?? (tool.output || null);

  return (
    <div className={`tool-card status-${tool.status}`} data-testid="tool-card" data-status={tool.status} data-tool={tool.name}>
      <button type="button" className="tool-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={`status-dot ${tool.status}`} aria-hidden="true" />
        <span className="tool-name">{tool.name}</span>
        <span className="tool-brief">{brief(tool.arguments)}</span>
        <span className="tool-status">{LABELS[tool.status]}</span>
        <Icon name={open ? "chevronDown" : "chevronRight"} size={14} />
      </button>
      {asking && (
        <div className="approval-bar" role="group" aria-label={`Approve ${tool.name}`}>
          <span className="approval-question">
            Allow Cairn to run <strong>{tool.name}</strong>?
          </span>
          <div className="approval-buttons">
            <button type="button" ref={allowRef} className="primary" data-testid="approval-allow-once" onClick={() => decide("allow_once")}>
              Allow once
            </button>
            <button type="button" data-testid="approval-allow-always" onClick={() => decide("allow_always")}>
              Always allow {tool.name}
            </button>
            <button type="button" className="danger" data-testid="approval-deny" onClick={() => decide("deny")}>
              Deny
            </button>
          </div>
        </div>
      )}
      {open && (
        <div className="tool-body">
          <div className="tool-label">Arguments</div>
          <LongText className="tool-args" text={prettyJson(tool.arguments) || "(none)"} />
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
