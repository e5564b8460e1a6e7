import { createContext, useContext } from "react";
import type { Backend } from "../api/backend";

export const BackendContext = createContext<Backend | null>(null);

export function useBackend(): Backend {
  const b = useContext(BackendContext);
  if (!b) throw new Error("no backend");
  return b;
}
