import { memo, useEffect, useRef, useState } from "react";
import { toAppError } from "../api/errors";
import type { AppInfo, ProviderSettings } from "../api/types";
import { useBackend } from "../lib/backendContext";
import type { Notify } from "../state/useToasts";

/**
 * The model chip in the chat header: the model of the open session, and a menu of the
 * configured providers to switch to. A switch applies from the session's next message
 * and is recorded in the session; Settings is one entry away.
 */
export const ModelPicker = memo(function ModelPicker({ info, sessionId, notify, onSettings }: { info: AppInfo; sessionId: string | null; notify: Notify; onSettings(): void }) {
  const backend = useBackend();
  const [open, setOpen] = useState(false);
  const [providers, setProviders] = useState<ProviderSettings[] | null>(null);
  // The model chosen for this session, until another session opens.
  const [chosen, setChosen] = useState<{ session: string | null; model: string } | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const current = chosen && chosen.session === sessionId ? chosen.model : null;

  useEffect(() => {
    if (!open) return;
    backend
      .getSettings()
      .then((s) => setProviders(s.providers.filter((p) => p.name)))
      .catch((e: unknown) => notify(toAppError(e)));
    const away = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [open, backend, notify]);

  const choose = (p: ProviderSettings) => {
    setOpen(false);
    backend
      .chooseModel(p.name, null)
      .then((model) => {
        setChosen({ session: sessionId, model });
        notify(`This session goes on with ${model} (${p.name}) from the next message.`, "info");
      })
      .catch((e: unknown) => notify(toAppError(e)));
  };

  return (
    <div className="model-picker" ref={box} onKeyDown={(e) => e.key === "Escape" && (e.stopPropagation(), setOpen(false))}>
      <button type="button" className="model-chip" data-testid="model-chip" aria-haspopup="menu" aria-expanded={open} title="Choose the model of this session" onClick={() => setOpen(!open)}>
        {current ?? info.model}
        {!current && info.bundled_model && <span className="badge">offline</span>}
      </button>
      {open && (
        <div className="model-menu" role="menu" data-testid="model-menu">
          {providers === null && <div className="muted">Loading…</div>}
          {providers?.length === 0 && <div className="muted">No provider is configured.</div>}
          {providers?.map((p) => (
            <button key={p.name} type="button" role="menuitem" data-testid="model-option" data-provider={p.name} onClick={() => choose(p)}>
              <strong>{p.name}</strong> <span className="muted">{p.model ?? p.model_path ?? p.kind}</span>
            </button>
          ))}
          <button type="button" role="menuitem" onClick={() => (setOpen(false), onSettings())}>
            Settings…
          </button>
        </div>
      )}
    </div>
  );
});
