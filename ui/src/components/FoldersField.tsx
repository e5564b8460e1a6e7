import { useId, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import { useBackend } from "../lib/backendContext";

/**
 * `[memory] folders`: folders searched where they are (an Obsidian vault, ~/Documents),
 * picked in the system's dialog or typed. Read at start, so a change asks for a restart.
 */
export function FoldersField({ value, onChange }: { value: string[]; onChange(folders: string[]): void }) {
  const backend = useBackend();
  const id = useId();
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | null>(null);

  const add = (folder: string) => {
    const f = folder.trim();
    if (!f) return;
    if (!(f.startsWith("/") || f === "~" || f.startsWith("~/"))) {
      setError(`${f} is not a full path: start it with / or ~/`);
      return;
    }
    setError(null);
    if (!value.includes(f)) onChange([...value, f]);
    setTyped("");
  };

  const pick = () => {
    setError(null);
    backend
      .pickFolder()
      .then((f) => f && add(f))
      .catch((e: unknown) => setError(describeError(toAppError(e))));
  };

  return (
    <>
      <span className="label">Folders searched in place</span>
      <div data-testid="memory-folders">
        {value.length === 0 ? (
          <p className="small muted">None. Add a notes folder to search it where it is.</p>
        ) : (
          <ul className="folder-list">
            {value.map((f) => (
              <li key={f}>
                <span>{f}</span>
                <button type="button" className="small-button" aria-label={`Stop searching ${f}`} onClick={() => onChange(value.filter((x) => x !== f))}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        <div className="row">
          <button type="button" onClick={pick}>
            Add folder…
          </button>
          <input
            id={`${id}-typed`}
            aria-label="Folder path"
            value={typed}
            placeholder="or type a path, e.g. ~/Notes"
            onChange={(e) => setTyped(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                add(typed);
              }
            }}
          />
          <button type="button" onClick={() => add(typed)} disabled={!typed.trim()}>
            Add
          </button>
        </div>
        {error && (
          <p className="small error-text" role="alert">
            {error}
          </p>
        )}
        <p className="small muted">Cairn reads and searches these folders and never changes anything in them. A change applies when Cairn starts again.</p>
      </div>
    </>
  );
}
