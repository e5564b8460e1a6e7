import { useState } from "react";
import { describeError, toAppError } from "../api/errors";
import { useBackend } from "../lib/backendContext";

/**
 * An API key field (a provider's, a search service's): what is typed goes straight to the key
 * store under `keyName` (the system keyring, or the key file where there is none) and is never
 * shown again; the page only learns whether a key is stored. Two cells of a `grid2`.
 */
export function KeyField({
  id,
  label,
  keyName,
  hasKey,
  typed,
  onTyped,
  onStored,
  note,
}: {
  id: string;
  label: string;
  /** The name the key is kept under; storing waits until there is one. */
  keyName: string;
  hasKey: boolean;
  typed: string;
  onTyped(key: string): void;
  onStored(hasKey: boolean): void;
  /** Said after whether a key is stored (e.g. that the environment's key is used first). */
  note?: string;
}) {
  const backend = useBackend();
  const [message, setMessage] = useState<string | null>(null);

  const store = async (value: string | null) => {
    setMessage(null);
    try {
      await backend.setApiKey(keyName, value);
      onTyped("");
      onStored(value !== null);
      setMessage(value === null ? "Key removed." : "Key stored.");
    } catch (e) {
      setMessage(describeError(toAppError(e)));
    }
  };

  return (
    <>
      <label htmlFor={id}>{label}</label>
      <div className="row key-field">
        <input
          id={id}
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={typed}
          onChange={(e) => onTyped(e.target.value)}
          placeholder={hasKey ? "key stored: type to replace" : "paste the key"}
        />
        <button type="button" onClick={() => void store(typed.trim())} disabled={!typed.trim() || !keyName.trim()}>
          Store key
        </button>
        {hasKey && (
          <button type="button" onClick={() => void store(null)}>
            Remove key
          </button>
        )}
      </div>
      <span />
      <span className="small muted" data-testid="key-state">
        {message ?? (hasKey ? "key stored" : "no key stored")}
        {note && ` ${note}`}
      </span>
    </>
  );
}
