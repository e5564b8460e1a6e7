// Mounts a diff from editor/diff.ts into an element, loading that module (and
// @codemirror/merge) on first use so start-up stays small.
import { useEffect, useRef, useState, type RefObject } from "react";
import type { DiffHandle } from "./diff";

type DiffModule = typeof import("./diff");

let diffModule: Promise<DiffModule> | null = null;
const loadDiff = () => (diffModule ??= import("./diff"));

/** Builds the view with `make` once loaded, again when `texts` change; `failed` when the module could not load. */
export function useDiff(make: (m: DiffModule, parent: HTMLElement) => DiffHandle, texts: readonly string[]): { host: RefObject<HTMLDivElement | null>; failed: boolean } {
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  const build = useRef(make);
  build.current = make;
  useEffect(() => {
    let live = true;
    let handle: DiffHandle | null = null;
    loadDiff().then(
      (m) => {
        if (live && host.current) handle = build.current(m, host.current);
      },
      () => live && setFailed(true),
    );
    return () => {
      live = false;
      handle?.destroy();
    };
    // The texts are the dependencies (a fixed number per call site).
  }, texts);
  return { host, failed };
}
