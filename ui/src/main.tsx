import { mark } from "./lib/startMarks";
import { createRoot } from "react-dom/client";
import type { Backend } from "./api/backend";
import { tauriBackend } from "./api/tauri";
import { App } from "./App";
import { limitContextMenu } from "./lib/contextMenu";
import { loadFirstScreen } from "./lib/firstScreen";
import { markFontPlatform } from "./lib/fonts";
import "./styles.css";

// Inside the app shell the Tauri backend; in a plain browser (npm run dev) the in-memory fake,
// loaded only there.
async function chooseBackend(): Promise<Backend> {
  if ("__TAURI_INTERNALS__" in window) {
    limitContextMenu(window);
    return tauriBackend;
  }
  const { createFakeBackend } = await import("./api/fake");
  return createFakeBackend();
}

mark("evaluated");
markFontPlatform(document, navigator.userAgent);

void chooseBackend().then(async (backend) => {
  const first = await loadFirstScreen(backend);
  const root = document.getElementById("root");
  if (root) createRoot(root).render(<App backend={backend} first={first} />);
});
