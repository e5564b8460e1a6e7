import { useEffect, useRef } from "react";

export interface Shortcuts {
  search(): void;
  newSession(): void;
  settings(): void;
  /** Esc that nothing else took (overlays and inline editors handle their own). */
  escape(): void;
}

/** App-wide keys: Ctrl+K, Ctrl+N, Ctrl+, and Esc. Ctrl+S belongs to the editor. */
export function useShortcuts(handlers: Shortcuts): void {
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = (e.ctrlKey || e.metaKey) && !e.altKey;
      const h = latest.current;
      if (mod && e.key.toLowerCase() === "k") {
        e.preventDefault();
        h.search();
      } else if (mod && !e.shiftKey && e.key.toLowerCase() === "n") {
        e.preventDefault();
        h.newSession();
      } else if (mod && e.key === ",") {
        e.preventDefault();
        h.settings();
      } else if (e.key === "Escape" && !e.defaultPrevented) {
        h.escape();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
