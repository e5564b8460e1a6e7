import { useEffect, useId, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { AppError, AppInfo, Limits, ProviderSettings, SettingsView } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { EmbedderField } from "./EmbedderField";
import { FoldersField } from "./FoldersField";
import { LocalServers } from "./LocalServers";
import { McpServers } from "./McpServers";
import { Modal } from "./Modal";
import { ProviderCard } from "./ProviderCard";
import { WebSearchField, webSearchError } from "./WebSearchField";

type Policy = "allow" | "ask" | "deny";
const POLICIES: Policy[] = ["ask", "allow", "deny"];
const PURPOSES = [
  ["memory_flush", "Memory flush"],
  ["consolidation", "Consolidation"],
  ["compaction", "Compaction"],
] as const;

/** The number fields of the Runs section: key, label, placeholder (the default). */
const LIMITS: [Exclude<keyof Limits, "strict">, string, string][] = [
  ["max_steps", "Steps per run", "50"],
  ["deadline_s", "Run deadline (seconds)", "none"],
  ["chat_timeout_s", "Chat answer limit (seconds)", "the provider's (600)"],
  ["memory_flush_timeout_s", "Memory flush limit (seconds)", "the provider's"],
  ["compaction_timeout_s", "Compaction limit (seconds)", "the provider's"],
  ["consolidation_timeout_s", "Consolidation limit (seconds)", "the provider's"],
  ["subagents_timeout_s", "Subagent answer limit (seconds)", "as chat"],
  ["subagent_max_depth", "Subagent nesting depth", "2"],
];

function saveError(e: AppError): string {
  switch (e.code) {
    case "invalid":
      return `Some settings are not valid: ${e.message}`;
    case "provider":
      return `The chat model could not be set up: ${e.message}. Check the provider, model and key.`;
    case "io":
      return `The settings file could not be written: ${e.message}`;
    case "busy":
      return "A run is going on. Stop it, then save again.";
    default:
      return describeError(e);
  }
}

export function SettingsDialog({ onClose, onSaved }: { onClose(): void; onSaved(info: AppInfo): void }) {
  const backend = useBackend();
  const id = useId();
  const [draft, setDraft] = useState<SettingsView | null>(null);
  const [rules, setRules] = useState<[string, Policy][]>([]);
  // Stable keys for the provider cards (their typed key and test result stay with them).
  const [cardKeys, setCardKeys] = useState<number[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // The folders as saved when the dialog opened: a change is read at the next start.
  const [startFolders, setStartFolders] = useState<string[]>([]);
  const [askRestart, setAskRestart] = useState(false);
  // A Save was refused for a field's value: show what is wrong beside the field too.
  const [showErrors, setShowErrors] = useState(false);

  useEffect(() => {
    backend
      .getSettings()
      .then((s) => {
        setDraft(s);
        setStartFolders(s.folders);
        setCardKeys(s.providers.map((_, i) => i));
        setRules(Object.entries(s.approval.tools));
      })
      .catch((e: unknown) => setError(describeError(toAppError(e))));
  }, [backend]);

  const patch = (p: Partial<SettingsView>) => setDraft((d) => (d ? { ...d, ...p } : d));
  const addProvider = (p: ProviderSettings) => {
    patch({ providers: [...(draft?.providers ?? []), p] });
    setCardKeys([...cardKeys, Math.max(-1, ...cardKeys) + 1]);
  };
  const setProvider = (i: number, p: ProviderSettings) => patch({ providers: draft?.providers.map((x, k) => (k === i ? p : x)) ?? [] });

  const save = async () => {
    if (!draft) return;
    const invalid = webSearchError(draft.web_search);
    if (invalid) {
      setShowErrors(true);
      setError(`Some settings are not valid: ${invalid}`);
      return;
    }
    setSaving(true);
    setError(null);
    const tools = Object.fromEntries(rules.filter(([name]) => name.trim()).map(([name, p]) => [name.trim(), p]));
    try {
      const info = await backend.saveSettings({ ...draft, approval: { ...draft.approval, tools } });
      onSaved(info);
      if (draft.folders.join("\n") !== startFolders.join("\n")) setAskRestart(true);
      else onClose();
    } catch (e) {
      setError(saveError(toAppError(e)));
    } finally {
      setSaving(false);
    }
  };

  return (
    <Modal label="Settings" className="settings-dialog" testId="settings-dialog" onClose={onClose}>
      <header className="modal-head">
        <h2>Settings</h2>
        <button type="button" className="icon-button" aria-label="Close settings" onClick={onClose}>
          ×
        </button>
      </header>
      {!draft ? (
        <div className="modal-body">{error ? <div className="notice error">{error}</div> : <p className="muted">Loading…</p>}</div>
      ) : (
        <div className="modal-body">
          <section>
            <h3>Model providers</h3>
            {draft.providers.map((p, i) => (
              <ProviderCard
                key={cardKeys[i] ?? i}
                p={p}
                onChange={(np) => setProvider(i, np)}
                onRemove={() => {
                  patch({ providers: draft.providers.filter((_, k) => k !== i) });
                  setCardKeys(cardKeys.filter((_, k) => k !== i));
                }}
              />
            ))}
            <button type="button" onClick={() => addProvider({ name: "", kind: "openai", base_url: null, model: null, model_path: null, context_window: null, vision: null, image_max_side: null, has_key: false })}>
              Add provider
            </button>
            <LocalServers taken={draft.providers.map((p) => p.name)} onAdd={addProvider} />
          </section>
          <section className="grid2">
            <h3 className="span2">Models</h3>
            <label htmlFor={`${id}-default`}>Chat provider</label>
            <select id={`${id}-default`} value={draft.default_provider ?? ""} onChange={(e) => patch({ default_provider: e.target.value || null })}>
              <option value="">Bundled offline model</option>
              {draft.providers
                .filter((p) => p.name.trim())
                .map((p) => (
                  <option key={p.name} value={p.name}>
                    {p.name}
                    {p.model ? ` (${p.model})` : ""}
                  </option>
                ))}
            </select>
            {PURPOSES.map(([key, label]) => (
              <div key={key} className="contents">
                <label htmlFor={`${id}-${key}`}>{label}</label>
                <input
                  id={`${id}-${key}`}
                  value={draft.models[key] ?? ""}
                  placeholder="same as the chat model"
                  onChange={(e) => patch({ models: { ...draft.models, [key]: e.target.value.trim() ? e.target.value : null } })}
                />
              </div>
            ))}
            <span className="label">Bundled model</span>
            <code className="readonly" title="Where the bundled model is looked for">
              {draft.bundled_model_path}
            </code>
          </section>
          <section className="grid2">
            <h3 className="span2">Memory</h3>
            <label htmlFor={`${id}-interval`}>Consolidate every (hours)</label>
            <input
              id={`${id}-interval`}
              type="number"
              min={0}
              value={draft.consolidation_interval_hours ?? ""}
              placeholder="default (6)"
              onChange={(e) => patch({ consolidation_interval_hours: e.target.value === "" ? null : Number(e.target.value) })}
            />
            <label htmlFor={`${id}-flush`}>Write memory in the background</label>
            <select
              id={`${id}-flush`}
              data-testid="memory-flush"
              value={draft.memory_flush === null || draft.memory_flush === undefined ? "auto" : draft.memory_flush ? "on" : "off"}
              onChange={(e) => patch({ memory_flush: e.target.value === "auto" ? null : e.target.value === "on" })}
            >
              <option value="auto">yes, unless the only model is a local one</option>
              <option value="on">yes, with any model</option>
              <option value="off">no</option>
            </select>
            <EmbedderField
              value={draft.embedder}
              providers={draft.providers}
              bundledInstalled={draft.bundled_embedder_installed}
              onChange={(embedder) => patch({ embedder })}
            />
            <FoldersField value={draft.folders} onChange={(folders) => patch({ folders })} />
            <label htmlFor={`${id}-ws`}>Workspace folder</label>
            <input id={`${id}-ws`} value={draft.workspace ?? ""} placeholder="the default folder" onChange={(e) => patch({ workspace: e.target.value.trim() ? e.target.value : null })} />
          </section>
          <section className="grid2" data-testid="limits">
            <h3 className="span2">Runs</h3>
            {LIMITS.map(([key, label, placeholder]) => (
              <div key={key} className="contents">
                <label htmlFor={`${id}-${key}`}>{label}</label>
                <input
                  id={`${id}-${key}`}
                  type="number"
                  min={key === "max_steps" || key === "subagent_max_depth" ? 1 : 0}
                  value={draft.limits[key] ?? ""}
                  placeholder={placeholder}
                  onChange={(e) => patch({ limits: { ...draft.limits, [key]: e.target.value === "" ? null : Number(e.target.value) } })}
                />
              </div>
            ))}
            <label htmlFor={`${id}-strict`}>Finish only when work items are done</label>
            <input id={`${id}-strict`} type="checkbox" checked={draft.limits.strict} onChange={(e) => patch({ limits: { ...draft.limits, strict: e.target.checked } })} />
          </section>
          <section>
            <h3>Tool approval</h3>
            <div className="grid2">
              <label htmlFor={`${id}-policy`}>Every tool</label>
              <select id={`${id}-policy`} value={draft.approval.default} onChange={(e) => patch({ approval: { ...draft.approval, default: e.target.value as Policy } })}>
                {POLICIES.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
              {rules.map(([name, policy], i) => (
                <div key={i} className="contents">
                  <input aria-label="Tool name" value={name} placeholder="tool, e.g. bash" onChange={(e) => setRules(rules.map((r, k) => (k === i ? [e.target.value, r[1]] : r)))} />
                  <div className="row">
                    <select aria-label={`Policy for ${name || "tool"}`} value={policy} onChange={(e) => setRules(rules.map((r, k) => (k === i ? [r[0], e.target.value as Policy] : r)))}>
                      {POLICIES.map((p) => (
                        <option key={p} value={p}>
                          {p}
                        </option>
                      ))}
                    </select>
                    <button type="button" aria-label={`Remove rule for ${name || "tool"}`} onClick={() => setRules(rules.filter((_, k) => k !== i))}>
                      Remove
                    </button>
                  </div>
                </div>
              ))}
            </div>
            <button type="button" onClick={() => setRules([...rules, [rules.some(([n]) => n === "bash") ? "" : "bash", "ask"]])}>
              Add a rule for one tool
            </button>
          </section>
          <section className="grid2" data-testid="web-and-hooks">
            <h3 className="span2">Web and hooks</h3>
            <WebSearchField
              value={draft.web_search}
              policy={rules.find(([name]) => name.trim() === "web_search")?.[1] ?? draft.approval.default}
              showErrors={showErrors}
              onChange={(web_search) => patch({ web_search })}
            />
            <label htmlFor={`${id}-private`}>Let web_fetch reach local and private addresses</label>
            <input id={`${id}-private`} type="checkbox" checked={draft.web_allow_private} onChange={(e) => patch({ web_allow_private: e.target.checked })} />
            <span className="label">Your hooks</span>
            {draft.hooks.length === 0 ? (
              <span className="small muted">None. Add them to config.toml as [[hooks.pre_tool]] and so on.</span>
            ) : (
              <ul className="hooks small" data-testid="hooks">
                {draft.hooks.map((h, i) => (
                  <li key={i}>
                    <code>{h.event}</code>
                    {h.matcher && <> on <code>{h.matcher}</code></>}: <code>{h.command}</code>
                    {h.timeout_s !== null && <span className="muted"> (up to {h.timeout_s} s)</span>}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <McpServers />
          <p className="small muted">Stored in {draft.path}. API keys are not kept in this file.</p>
          <p className="small muted" data-testid="key-store">
            {draft.key_store.description}.
          </p>
        </div>
      )}
      {draft && error && (
        <div className="notice error" role="alert">
          {error}
        </div>
      )}
      {askRestart && (
        <div className="notice" role="status" data-testid="restart-notice">
          Saved. Cairn searches the folders as changed from its next start.
        </div>
      )}
      <footer className="modal-foot">
        {askRestart ? (
          <>
            <button type="button" onClick={onClose}>
              Later
            </button>
            <button
              type="button"
              className="primary"
              onClick={() =>
                backend
                  .restartApp()
                  .then(onClose)
                  .catch((e: unknown) => setError(saveError(toAppError(e))))
              }
            >
              Restart now
            </button>
          </>
        ) : (
          <>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="button" className="primary" onClick={() => void save()} disabled={!draft || saving}>
              {saving ? "Saving…" : "Save"}
            </button>
          </>
        )}
      </footer>
    </Modal>
  );
}
