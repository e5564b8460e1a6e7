import type { AppInfo } from "../api/types";

function Keys({ k }: { k: string }) {
  return <kbd>{k}</kbd>;
}

export function Welcome({ info, onOpenSettings }: { info: AppInfo | null; onOpenSettings(): void }) {
  if (!info) return <div className="welcome muted">Loading…</div>;
  return (
    <div className="welcome">
      <h1>What shall we work on?</h1>
      <p>
        You are talking to <strong>{info.model}</strong>
        {info.provider !== "local" && <> via {info.provider}</>}. Cairn remembers what matters as markdown notes in{" "}
        <code>{info.workspace}</code>, which you can read and edit on the left.
      </p>
      {info.bundled_model && (
        <p className="bundled-note" role="note">
          Cairn is running the small bundled offline model. It works without a network or an account, but it is not very capable. A stronger model can be set in{" "}
          <button type="button" className="link-button" onClick={onOpenSettings}>
            Settings
          </button>
          .
        </p>
      )}
      {!info.tools && <p className="muted">This model cannot use tools, so Cairn will only answer from what it already knows and remembers.</p>}
      <ul className="shortcuts">
        <li>
          <Keys k="Enter" /> send · <Keys k="Shift+Enter" /> new line · <Keys k="Esc" /> stop
        </li>
        <li>
          <Keys k="Ctrl+K" /> search memory · <Keys k="Ctrl+N" /> new session · <Keys k="Ctrl+," /> settings
        </li>
      </ul>
    </div>
  );
}
