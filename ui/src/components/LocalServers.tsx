import { useState } from "react";
import { toAppError } from "../api/errors";
import type { LocalServer, ProviderSettings } from "../api/types";
import { useBackend } from "../lib/backendContext";

const LABELS: Record<LocalServer["kind"], string> = { ollama: "Ollama", lm_studio: "LM Studio", llama_cpp: "llama.cpp server", vllm: "vLLM" };
const SLUGS: Record<LocalServer["kind"], string> = { ollama: "ollama", lm_studio: "lm-studio", llama_cpp: "llama-cpp", vllm: "vllm" };

/** A provider for `model` of `server`, named after the server and not clashing with `taken`. */
export function providerFor(server: LocalServer, model: { id: string; context_window: number | null }, taken: string[]): ProviderSettings {
  const base = SLUGS[server.kind];
  let name = base;
  for (let n = 2; taken.includes(name); n += 1) name = `${base}-${n}`;
  return { name, kind: "openai", base_url: server.base_url, model: model.id, model_path: null, context_window: model.context_window, vision: null, image_max_side: null, has_key: false };
}

/**
 * "Find local servers": the model servers running on this machine, each model with the
 * context window it runs with; "Add" makes it a provider with that window (used for
 * compaction, so the server never cuts a conversation it was told would fit).
 */
export function LocalServers({ taken, onAdd }: { taken: string[]; onAdd(p: ProviderSettings): void }) {
  const backend = useBackend();
  const [found, setFound] = useState<LocalServer[] | null>(null);
  const [looking, setLooking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const look = async () => {
    setLooking(true);
    setError(null);
    try {
      setFound(await backend.discoverLocalServers());
    } catch (e) {
      setError(toAppError(e).message);
    } finally {
      setLooking(false);
    }
  };
  return (
    <div className="local-servers" data-testid="local-servers">
      <button type="button" onClick={() => void look()} disabled={looking}>
        {looking ? "Looking…" : "Find local servers"}
      </button>
      {error && <div className="notice error">{error}</div>}
      {found && found.length === 0 && <p className="muted">No model server found on this machine (Ollama, LM Studio, llama.cpp or vLLM on their default ports).</p>}
      {found?.map((server) => (
        <div key={server.base_url} className="local-server" data-testid="local-server" data-kind={server.kind}>
          <div>
            <strong>{LABELS[server.kind]}</strong> <span className="muted">{server.base_url}</span>
          </div>
          {server.models.length === 0 && <p className="muted">No models.</p>}
          <ul>
            {server.models.map((m) => (
              <li key={m.id}>
                <span className="model-id">{m.id}</span>{" "}
                <span className="muted">{m.context_window ? `${m.context_window.toLocaleString("en-US")} tokens` : "window not reported"}</span>{" "}
                <button type="button" className="link-button" data-testid="add-found-model" onClick={() => onAdd(providerFor(server, m, taken))}>
                  Add
                </button>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}
