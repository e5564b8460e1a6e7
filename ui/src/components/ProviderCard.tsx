import { useId, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { ConnectionCheck, ProviderKind, ProviderSettings } from "../api/types";
import { useBackend } from "../lib/backendContext";

const KINDS: { value: ProviderKind; label: string }[] = [
  { value: "openai", label: "OpenAI-compatible" },
  { value: "anthropic", label: "Anthropic" },
  { value: "local", label: "Local model (GGUF)" },
];

const orNull = (v: string): string | null => (v.trim() ? v.trim() : null);

/** One provider in Settings. The API key goes straight to the key store (the system keyring, or
 * the key file where there is none) and is never shown. */
export function ProviderCard({ p, onChange, onRemove }: { p: ProviderSettings; onChange(p: ProviderSettings): void; onRemove(): void }) {
  const backend = useBackend();
  const id = useId();
  const [key, setKey] = useState("");
  const [check, setCheck] = useState<ConnectionCheck | null>(null);
  const [testing, setTesting] = useState(false);
  const [keyMsg, setKeyMsg] = useState<string | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  const set = (patch: Partial<ProviderSettings>) => onChange({ ...p, ...patch });

  const storeKey = async (value: string | null) => {
    setKeyMsg(null);
    try {
      await backend.setApiKey(p.name, value);
      setKey("");
      set({ has_key: value !== null });
      setKeyMsg(value === null ? "Key removed." : "Key stored.");
    } catch (e) {
      setKeyMsg(describeError(toAppError(e)));
    }
  };

  const test = async () => {
    setTesting(true);
    setCheck(null);
    try {
      setCheck(await backend.checkProvider(p, key.trim() ? key.trim() : null));
    } catch (e) {
      setCheck({ ok: false, message: describeError(toAppError(e)), models: [] });
    } finally {
      setTesting(false);
    }
  };

  return (
    <fieldset className="provider-card" data-testid="provider-card">
      <legend>{p.name || "New provider"}</legend>
      <div className="grid2">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={p.name} onChange={(e) => set({ name: e.target.value })} placeholder="e.g. openrouter" />
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={p.kind} onChange={(e) => set({ kind: e.target.value as ProviderKind })}>
          {KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
        {p.kind !== "local" && (
          <>
            <label htmlFor={`${id}-url`}>Base URL</label>
            <input id={`${id}-url`} value={p.base_url ?? ""} onChange={(e) => set({ base_url: orNull(e.target.value) })} placeholder={p.kind === "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1"} />
          </>
        )}
        {p.kind === "local" && (
          <>
            <label htmlFor={`${id}-path`}>Model file</label>
            <div className="row">
              <input id={`${id}-path`} value={p.model_path ?? ""} onChange={(e) => set({ model_path: orNull(e.target.value) })} placeholder="/path/to/model.gguf" />
              <button
                type="button"
                onClick={() =>
                  void backend
                    .pickModelFile()
                    .then((path) => path && set({ model_path: path }))
                    .catch((e: unknown) => setPicked(describeError(toAppError(e))))
                }
              >
                Choose file…
              </button>
            </div>
            {picked && (
              <div className="notice error span2" role="alert">
                {picked}
              </div>
            )}
          </>
        )}
        <label htmlFor={`${id}-model`}>Model</label>
        <div className="row">
          <input id={`${id}-model`} value={p.model ?? ""} onChange={(e) => set({ model: orNull(e.target.value) })} placeholder="model name" />
          {check && check.models.length > 0 && (
            <select aria-label="Pick a model" value="" onChange={(e) => e.target.value && set({ model: e.target.value })}>
              <option value="">Pick ({check.models.length})</option>
              {check.models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </div>
        <label htmlFor={`${id}-ctx`}>Context window</label>
        <input
          id={`${id}-ctx`}
          type="number"
          min={0}
          value={p.context_window ?? ""}
          placeholder="from the model"
          onChange={(e) => set({ context_window: e.target.value ? Number(e.target.value) : null })}
        />
        {p.kind !== "local" && (
          <>
            <label htmlFor={`${id}-key`}>API key</label>
            <div className="row">
              <input
                id={`${id}-key`}
                type="password"
                autoComplete="off"
                spellCheck={false}
                value={key}
                onChange={(e) => setKey(e.target.value)}
                placeholder={p.has_key ? "key stored: type to replace" : "paste the key"}
              />
              <button type="button" onClick={() => void storeKey(key.trim())} disabled={!key.trim() || !p.name.trim()}>
                Store key
              </button>
              {p.has_key && (
                <button type="button" onClick={() => void storeKey(null)}>
                  Remove key
                </button>
              )}
            </div>
            <span />
            <span className="small muted" data-testid="key-state">
              {keyMsg ?? (p.has_key ? "key stored" : "no key stored")}
            </span>
          </>
        )}
      </div>
      <div className="row between">
        <div className="row">
          <button type="button" onClick={() => void test()} disabled={testing}>
            {testing && <span className="spinner" aria-hidden="true" />} Test connection
          </button>
          {check && (
            <span className={check.ok ? "check ok" : "check error"} role="status">
              {check.ok ? "✓ " : "✗ "}
              {check.message}
            </span>
          )}
        </div>
        <button type="button" className="danger" onClick={onRemove}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}
