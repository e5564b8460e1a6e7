// App-wide events fan out to whichever components care (tree, editor, memory panel ...).
import { createContext, useContext, useEffect, useRef } from "react";
import type { AppEvent } from "../api/types";

type Handler = (e: AppEvent) => void;

export class EventHub {
  private handlers = new Set<Handler>();

  emit = (e: AppEvent): void => {
    for (const h of [...this.handlers]) h(e);
  };

  on(h: Handler): () => void {
    this.handlers.add(h);
    return () => {
      this.handlers.delete(h);
    };
  }
}

export const HubContext = createContext<EventHub>(new EventHub());

/** Calls `handler` (the latest one given) for every app event while mounted. */
export function useAppEvents(handler: Handler): void {
  const hub = useContext(HubContext);
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => hub.on((e) => latest.current(e)), [hub]);
}
