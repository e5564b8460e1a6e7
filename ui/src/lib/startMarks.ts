// When the page's start-up steps happened, in milliseconds since its navigation began
// (`performance.now()`), sent with `ready()` so the shell can say where a start's time went.
// Imported first by main.tsx: its "script" mark is when the bundle, parsed, began to run.
import type { PageMarks, StartSteps } from "../api/types";

export type StartMark = keyof StartSteps;

const now = () => (typeof performance === "undefined" ? 0 : performance.now());
const origin = typeof performance === "undefined" ? 0 : performance.timeOrigin;
const marks: StartSteps = {};

/** Records `name` the first time it is reached; later calls keep the first time. */
export function mark(name: StartMark): void {
  if (marks[name] === undefined) marks[name] = Math.round(now() * 10) / 10;
}

/** Forgets the marks, as a page loaded again would (for tests, which start many pages). */
export function restartMarks(): void {
  for (const name of Object.keys(marks) as StartMark[]) delete marks[name];
  mark("script");
}

/** The marks so far, and the wall-clock time (ms since the epoch) navigation began. */
export function startMarks(): PageMarks {
  return { origin, marks: { ...marks } };
}

mark("script");
