import { useId, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { ConnectionCheck, ProviderKind, ProviderSettings } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { KeyField } from "./KeyField";

const KINDS: { value: ProviderKind; label: string }[] = [
  { value: "openai", label: "OpenAI-compatible" },
  { value: "anthropic", label: "Anthropic" },
  { value: "local", label: "Local model (GGUF)" },
];

const orNull = (v: string): string | null => (v.trim() ? v.trim() : null);

type Sees = "auto" | "yes" | "no";
const SEES: { value: Sees; label: string }[] = [
  { value: "auto", label: "Automatic" },
  { value: "yes", label: "Yes" },
  { value: "no", label: "No" },
];
const seesOf = (vision: boolean | null | undefined): Sees => (vision == null ? "auto" : vision ? "yes" : "no");
const visionOf = (sees: Sees): boolean | null => (sees === "auto" ? null : sees === "yes");
/** `image_max_side` when none is set, and its bounds. */
const SIDE = { default: 1568, min: 64, max: 8192 };

/** One provider in Settings. The API key goes straight to the key store (the system keyring, or
 * the key file where there is none) and is never shown. */
export function ProviderCard({ p, onChange, onRemove }: { p: ProviderSettings; onChange(p: ProviderSettings): void; onRemove(): void }) {
  const backend = useBackend();
  const id = useId();
  const [key, setKey] = useState("");
  const [check, setCheck] = useState<ConnectionCheck | null>(null);
  const [testing, setTesting] = useState(false);
  const [picked, setPicked] = useState<string | null>(null);
  const set = (patch: Partial<ProviderSettings>) => onChange({ ...p, ...patch });

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
          <KeyField id={`${id}-key`} label="API key" keyName={p.name} hasKey={p.has_key} typed={key} onTyped={setKey} onStored={(has_key) => set({ has_key })} />
        )}
        {p.kind !== "local" && (
          <>
            <label htmlFor={`${id}-vision`}>Sees pictures</label>
            <select id={`${id}-vision`} value={seesOf(p.vision)} onChange={(e) => set({ vision: visionOf(e.target.value as Sees) })}>
              {SEES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
            {p.vision !== false && (
              <>
                <label htmlFor={`${id}-side`}>Largest picture side</label>
                <input
                  id={`${id}-side`}
                  type="number"
                  min={SIDE.min}
                  max={SIDE.max}
                  value={p.image_max_side ?? ""}
                  placeholder={`${SIDE.default} pixels`}
                  onChange={(e) => set({ image_max_side: e.target.value ? Number(e.target.value) : null })}
                />
              </>
            )}
            <span />
            <span className="small muted" data-testid="vision-hint">
              {p.vision === false
                ? "It gets a picture's name, size and the text read in it, never the picture."
                : p.vision
                  ? `It is sent pictures, at most ${p.image_max_side ?? SIDE.default} pixels on their longest side.`
                  : p.kind === "anthropic"
                    ? "Anthropic's models see pictures: it is sent them."
                    : "Sent pictures if its server (Ollama, LM Studio, llama.cpp on this machine) says the model sees; otherwise their text."}
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
