import { render, screen, waitFor } from "@testing-library/react";
import userEvent, { type UserEvent } from "@testing-library/user-event";
import { EditorView } from "@codemirror/view";
import { expect } from "vitest";
import { App } from "../App";
import { createFakeBackend, type FakeOptions } from "../api/fake";
import { loadFirstScreen } from "../lib/firstScreen";

/** Renders the app on a fake backend as main.tsx does: the first screen loaded first
 * (`firstScreen: false`: rendered without it, as when a run goes on or the shell refused it). */
export async function renderApp(opts: FakeOptions & { firstScreen?: boolean } = {}) {
  const { firstScreen = true, ...fakeOpts } = opts;
  const fake = createFakeBackend({ delayMs: 0, ...fakeOpts });
  const user = userEvent.setup({ delay: null });
  const first = firstScreen ? await loadFirstScreen(fake) : null;
  const utils = render(<App backend={fake} first={first} />);
  await waitFor(() => expect(screen.getByTestId("composer")).toBeEnabled());
  return { fake, user, ...utils };
}

/** The CodeMirror view inside the editor panel, once a file is open. */
export async function editorView(): Promise<EditorView> {
  let view: EditorView | null = null;
  await waitFor(() => {
    const dom = screen.getByTestId("editor").querySelector(".cm-editor");
    view = dom instanceof HTMLElement ? EditorView.findFromDOM(dom) : null;
    expect(view).not.toBeNull();
  });
  return view as unknown as EditorView;
}

export function typeInEditor(view: EditorView, text: string) {
  view.dispatch({ changes: { from: view.state.doc.length, insert: text } });
}

/** Waits until no run is going on (the Stop button is gone and the transcript reloaded). */
export async function runFinished() {
  await waitFor(() => expect(screen.queryByTestId("stop-button")).toBeNull(), { timeout: 5000 });
  await waitFor(() => expect(screen.getByTestId("send-button")).toHaveTextContent("Send"), { timeout: 5000 });
}

/** Clicks an approval button once it takes clicks (they stay disabled briefly after a request appears). */
export async function decide(user: UserEvent, testId: string) {
  await waitFor(() => expect(screen.getByTestId(testId)).toBeEnabled());
  await user.click(screen.getByTestId(testId));
}
