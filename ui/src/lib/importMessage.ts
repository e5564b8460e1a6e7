import type { ImportReport } from "../api/types";

/** What the app says after an import. */
export function importMessage(r: ImportReport): string {
  const plural = (n: number) => `${n} conversation${n === 1 ? "" : "s"}`;
  const made = `Imported ${plural(r.sessions)} from ${r.source}.`;
  if (r.already === 0) return made;
  const before = `${plural(r.already)} ${r.already === 1 ? "was" : "were"} imported before and left as ${r.already === 1 ? "it is" : "they are"}.`;
  return r.sessions === 0 ? `Nothing new from ${r.source}: ${before}` : `${made} ${before}`;
}
