import { useId, useState } from "react";
import type { Policy, SearchBackend, WebSearch } from "../api/types";
import { KeyField } from "./KeyField";

const SERVICES: { value: SearchBackend; label: string }[] = [
  { value: "brave", label: "Brave Search" },
  { value: "tavily", label: "Tavily" },
  { value: "exa", label: "Exa" },
  { value: "searxng", label: "SearXNG (your own)" },
  { value: "provider", label: "The provider's own (Anthropic)" },
];
/** The environment variable read for a service's key before the key store. */
const KEY_ENV: Partial<Record<SearchBackend, string>> = { brave: "BRAVE_API_KEY", tavily: "TAVILY_API_KEY", exa: "EXA_API_KEY" };

/** What is wrong with the SearXNG address, when SearXNG is chosen; null when nothing is. */
export function webSearchError(web: WebSearch): string | null {
  if (web.service !== "searxng") return null;
  const url = (web.searxng_url ?? "").trim();
  if (!url) return "SearXNG needs the address of your instance, e.g. http://localhost:8888.";
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  const ok = parsed !== null && (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "";
  return ok ? null : `${url} is not a web address: start it with http:// or https://, e.g. http://localhost:8888.`;
}

function asks(policy: Policy): string {
  switch (policy) {
    case "ask":
      return "Each search asks you before it runs.";
    case "allow":
      return "Searches run without asking (Tool approval allows web_search).";
    case "deny":
      return "Searches are refused (Tool approval denies web_search).";
  }
}

function hint(web: WebSearch, policy: Policy): string {
  const label = SERVICES.find((s) => s.value === web.service)?.label ?? "";
  switch (web.service) {
    case null:
      return "The model is offered no web search.";
    case "provider":
      return "Anthropic runs the searches on its servers while it answers, without asking, and bills them per search: the queries and the conversation go to Anthropic. Other providers have no search of their own.";
    case "searxng":
      return `${asks(policy)} What leaves this machine: the query the model writes, sent to your SearXNG, which asks the engines it is set up for.`;
    default: {
      const keyed = web.stored_keys.includes(web.service) || web.env_keys.includes(web.service);
      const sent = `${asks(policy)} What leaves this machine: the query the model writes, sent to ${label} with your key.`;
      return keyed ? sent : `${sent} Until a key is stored the model is offered no web search.`;
    }
  }
}

/**
 * `[web] search`: which service the `web_search` tool asks, with the service's key (kept in the
 * key store under the service's name, like a provider's) or, for SearXNG, its address. Two cells
 * of a `grid2` per row.
 */
export function WebSearchField({
  value,
  policy,
  showErrors,
  onChange,
}: {
  value: WebSearch;
  /** How Tool approval treats `web_search`. */
  policy: Policy;
  /** Show a bad address even before the field is left (after a Save). */
  showErrors: boolean;
  onChange(value: WebSearch): void;
}) {
  const id = useId();
  const [typedKey, setTypedKey] = useState("");
  const [left, setLeft] = useState(false);
  const service = value.service;
  const keyEnv = service ? KEY_ENV[service] : undefined;
  const error = showErrors || left ? webSearchError(value) : null;

  const setStored = (name: SearchBackend, has: boolean) =>
    onChange({ ...value, stored_keys: has ? [...value.stored_keys.filter((k) => k !== name), name] : value.stored_keys.filter((k) => k !== name) });

  return (
    <div className="contents" data-testid="web-search">
      <label htmlFor={`${id}-service`}>Web search</label>
      <select
        id={`${id}-service`}
        value={service ?? ""}
        onChange={(e) => {
          setTypedKey("");
          onChange({ ...value, service: (e.target.value || null) as SearchBackend | null });
        }}
      >
        <option value="">Off</option>
        {SERVICES.map((s) => (
          <option key={s.value} value={s.value}>
            {s.label}
          </option>
        ))}
      </select>
      {service && keyEnv && (
        <KeyField
          key={service}
          id={`${id}-key`}
          label={`${SERVICES.find((s) => s.value === service)?.label ?? service} API key`}
          keyName={service}
          hasKey={value.stored_keys.includes(service)}
          typed={typedKey}
          onTyped={setTypedKey}
          onStored={(has) => setStored(service, has)}
          note={value.env_keys.includes(service) ? `(${keyEnv} is set and used first)` : undefined}
        />
      )}
      {service === "searxng" && (
        <>
          <label htmlFor={`${id}-searxng`}>SearXNG address</label>
          <input
            id={`${id}-searxng`}
            value={value.searxng_url ?? ""}
            placeholder="http://localhost:8888"
            aria-invalid={error !== null}
            onBlur={() => setLeft(true)}
            onChange={(e) => onChange({ ...value, searxng_url: e.target.value.trim() ? e.target.value : null })}
          />
          {error && (
            <>
              <span />
              <span className="small error-text" role="alert" data-testid="searxng-error">
                {error}
              </span>
            </>
          )}
        </>
      )}
      <p className="span2 small muted field-hint" data-testid="web-search-hint">
        {hint(value, policy)}
      </p>
    </div>
  );
}
