import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { renderApp, runFinished } from "./helpers";

/** jsdom lays nothing out: the transcript's heights and scroll position are set by hand. */
function laidOut(el: HTMLElement) {
  const box = { height: 2000, client: 500, top: 0 };
  Object.defineProperty(el, "scrollHeight", { configurable: true, get: () => box.height });
  Object.defineProperty(el, "clientHeight", { configurable: true, get: () => box.client });
  Object.defineProperty(el, "scrollTop", {
    configurable: true,
    get: () => box.top,
    set: (v: number) => {
      box.top = Math.max(0, Math.min(v, box.height - box.client));
    },
  });
  return box;
}

describe("the transcript's scrolling", () => {
  it("follows the conversation as it grows, and never moves for anything else", async () => {
    const { fake, user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hello{Enter}");
    await runFinished();
    const transcript = screen.getByRole("log");
    const box = laidOut(transcript);
    // The user reads at the end.
    transcript.scrollTop = 1500;
    fireEvent.scroll(transcript);

    // A card opens under the pointer (the transcript gets taller), then the app draws again for a
    // file changed on disk: what the user looks at stays where it is.
    box.height = 2300;
    const now = await fake.readFile("AGENTS.md");
    await fake.writeFile("AGENTS.md", `${now.text}- A rule.\n`, now.version);
    await new Promise((r) => setTimeout(r, 50));
    expect(transcript.scrollTop).toBe(1500);

    // The conversation grows: the view follows it to the end.
    await user.type(screen.getByTestId("composer"), "again{Enter}");
    await runFinished();
    expect(transcript.scrollTop).toBe(box.height - box.client);
  });

  it("follows a streaming answer, and its own move keeps following when more text came before the scroll event", async () => {
    const { user } = await renderApp({ delayMs: 30 });
    const transcript = screen.getByRole("log");
    const box = laidOut(transcript);
    await user.type(screen.getByTestId("composer"), "hello{Enter}");
    await screen.findByTestId("stop-button");
    await waitFor(() => expect(transcript.scrollTop).toBe(1500));

    // The answer grew by more than the pinning margin before the event of the view's own move.
    box.height = 2600;
    fireEvent.scroll(transcript);
    await waitFor(() => expect(transcript.scrollTop).toBe(2100));
    await runFinished();
    expect(transcript.scrollTop).toBe(2100);
  });
});
