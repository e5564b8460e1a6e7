import { useCallback, useRef, useState } from "react";
import { describeError } from "../api/errors";
import type { AppError } from "../api/types";

export interface Toast {
  id: number;
  text: string;
  level: "info" | "error";
}

export type Notify = (what: AppError | string, level?: "info" | "error") => void;

/** Short messages at the corner: errors from actions, start-up notices. */
export function useToasts(): [Toast[], Notify, (id: number) => void] {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(0);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const notify = useCallback<Notify>(
    (what, level) => {
      next.current += 1;
      const id = next.current;
      const text = typeof what === "string" ? what : describeError(what);
      const lvl = level ?? (typeof what === "string" ? "info" : "error");
      setToasts((t) => [...t.slice(-3), { id, text, level: lvl }]);
      window.setTimeout(() => dismiss(id), lvl === "error" ? 10_000 : 8_000);
    },
    [dismiss],
  );
  return [toasts, notify, dismiss];
}
