// The first screen's data, asked for before the first render so the page renders it once
// instead of rendering empty and then again when the answers come.
import type { Backend } from "../api/backend";
import type { FirstScreen } from "../api/types";
import { mark } from "./startMarks";

/** The first screen's data, or null when the shell refused it (the page then asks for each
 * part after its first render, as it does when a run is going on). */
export async function loadFirstScreen(backend: Backend): Promise<FirstScreen | null> {
  const first = await backend.firstScreen().catch(() => null);
  if (first?.session) mark("booted");
  return first;
}
