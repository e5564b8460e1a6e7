import { useEffect, useId, useRef, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { McpServerStatus } from "../api/types";
import { useBackend } from "../lib/backendContext";

const STATE_TEXT: Record<McpServerStatus["state"], string> = {
  stopped: "stopped",
  starting: "starting…",
  running: "running",
  restarting: "restarting…",
  failed: "failed",
};

/**
 * The settings' MCP section: each server with its state (and why it failed) and its tools;
 * adding, enabling, disabling and removing one is written to config.toml at once.
 */
export function McpServers() {
  const backend = useBackend();
  const id = useId();
  const [servers, setServers] = useState<McpServerStatus[] | null>(null);
  const [starting, setStarting] = useState(false);
  const [form, setForm] = useState({ name: "", command: "", url: "" });
  const [error, setError] = useState<string | null>(null);

  const live = useRef(true);
  const show = (list: McpServerStatus[]) => live.current && setServers(list);
  /** Starts the enabled servers (as a run would) and shows what came of it. */
  const start = () => {
    setStarting(true);
    return backend
      .mcpServers(true)
      .then(show)
      .finally(() => live.current && setStarting(false));
  };

  useEffect(() => {
    live.current = true;
    // What is known at once, then again once the enabled servers have started.
    backend
      .mcpServers(false)
      .then(show)
      .then(() => live.current && start())
      .catch((e: unknown) => live.current && setError(describeError(toAppError(e))));
    return () => {
      live.current = false;
    };
  }, [backend]);

  const act = async (action: () => Promise<McpServerStatus[]>) => {
    setError(null);
    try {
      show(await action());
    } catch (e) {
      const err = toAppError(e);
      setError(err.code === "busy" ? "A run is going on. Stop it, then try again." : describeError(err));
      return false;
    }
    // The servers were started again with the new settings.
    start().catch((e: unknown) => live.current && setError(describeError(toAppError(e))));
    return true;
  };

  const add = async () => {
    if (await act(() => backend.addMcpServer(form))) setForm({ name: "", command: "", url: "" });
  };

  return (
    <section data-testid="mcp-servers">
      <h3>MCP servers</h3>
      <p className="small muted">
        Their tools are offered to the model as <code>server__tool</code> and ask before they run unless config.toml says otherwise.
        {starting && " Starting servers…"}
      </p>
      {servers?.length === 0 && <p className="small muted">No servers yet.</p>}
      {servers?.map((s) => (
        <div key={s.name} className="mcp-server" data-testid="mcp-server" data-state={s.state}>
          <div className="row">
            <strong>{s.name}</strong>
            <span className={`badge state-${s.enabled ? s.state : "disabled"}`} data-testid="mcp-state">
              {s.enabled ? STATE_TEXT[s.state] : "disabled"}
            </span>
            <code className="endpoint" title={s.endpoint}>
              {s.endpoint}
            </code>
            <label className="row">
              <input
                type="checkbox"
                checked={s.enabled}
                aria-label={`Enable ${s.name}`}
                onChange={(e) => void act(() => backend.setMcpServerEnabled(s.name, e.target.checked))}
              />
              enabled
            </label>
            <button type="button" aria-label={`Remove ${s.name}`} onClick={() => void act(() => backend.removeMcpServer(s.name))}>
              Remove
            </button>
          </div>
          {s.error && (
            <p className="small error-text" data-testid="mcp-error">
              {s.error}
            </p>
          )}
          {s.restarts > 0 && <p className="small muted">Restarted {s.restarts} times.</p>}
          {s.tools.length > 0 && (
            <details>
              <summary>
                {s.tools.length} tool{s.tools.length === 1 ? "" : "s"}
              </summary>
              <ul className="mcp-tools">
                {s.tools.map((t) => (
                  <li key={t.name}>
                    <code>{t.name}</code> <span className="muted">({t.approval})</span> {t.description}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      ))}
      <div className="grid2 mcp-add">
        <label htmlFor={`${id}-name`}>Server name</label>
        <input id={`${id}-name`} value={form.name} placeholder="e.g. everything" onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <label htmlFor={`${id}-command`}>Command</label>
        <input
          id={`${id}-command`}
          value={form.command}
          placeholder="npx -y @modelcontextprotocol/server-everything"
          onChange={(e) => setForm({ ...form, command: e.target.value })}
        />
        <label htmlFor={`${id}-url`}>or URL</label>
        <input id={`${id}-url`} value={form.url} placeholder="https://example.com/mcp" onChange={(e) => setForm({ ...form, url: e.target.value })} />
      </div>
      <button type="button" onClick={() => void add()} disabled={!form.name.trim()}>
        Add server
      </button>
      {error && (
        <div className="notice error" role="alert" data-testid="mcp-problem">
          {error}
        </div>
      )}
    </section>
  );
}
