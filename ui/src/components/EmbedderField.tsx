import { useId } from "react";
import type { ProviderSettings } from "../api/types";

type Choice = "local" | "provider" | "none";

/** `[memory] embedder` as three choices: the bundled model (the default), the embedding model
 * of an OpenAI-compatible provider ("provider/model"), or off (words only). */
export function EmbedderField({
  value,
  providers,
  bundledInstalled,
  onChange,
}: {
  value: string | null;
  providers: ProviderSettings[];
  bundledInstalled: boolean;
  onChange(value: string | null): void;
}) {
  const id = useId();
  const spec = (value ?? "").trim();
  const slash = spec.indexOf("/");
  const via = slash >= 0 ? spec.slice(0, slash) : null;
  const model = slash >= 0 ? spec.slice(slash + 1) : "";
  const choice: Choice = spec === "none" ? "none" : via !== null ? "provider" : "local";
  const servers = providers.filter((p) => p.kind === "openai" && p.name.trim());

  const choose = (next: Choice) => {
    if (next === "none") onChange("none");
    else if (next === "local") onChange(null);
    else onChange(`${servers[0]?.name ?? ""}/`);
  };

  return (
    <div className="contents" data-testid="embedder-field">
      <label htmlFor={`${id}-choice`}>Search by meaning</label>
      <select id={`${id}-choice`} value={choice} onChange={(e) => choose(e.target.value as Choice)}>
        <option value="local">Bundled model (all-MiniLM-L6-v2){bundledInstalled ? "" : ", not installed"}</option>
        <option value="provider" disabled={servers.length === 0}>
          A provider&apos;s embedding model{servers.length === 0 ? " (add an OpenAI-compatible provider first)" : ""}
        </option>
        <option value="none">Off: search by words only</option>
      </select>
      {choice === "provider" && (
        <>
          <label htmlFor={`${id}-provider`}>Embedding provider</label>
          <select id={`${id}-provider`} value={via ?? ""} onChange={(e) => onChange(`${e.target.value}/${model}`)}>
            {servers.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
          <label htmlFor={`${id}-model`}>Embedding model</label>
          <input id={`${id}-model`} value={model} placeholder="e.g. nomic-embed-text" onChange={(e) => onChange(`${via ?? ""}/${e.target.value}`)} />
        </>
      )}
      <p className="span2 muted" data-testid="embedder-hint">
        {choice === "none"
          ? "Search finds the words you type."
          : choice === "local" && !bundledInstalled
            ? "The bundled model is not installed (make run or scripts/fetch-model.sh fetches it): search finds the words you type until it is."
            : "Search finds what you meant as well as the words. A new model embeds every note again in the background; the status bar shows how far it has got."}
      </p>
    </div>
  );
}
