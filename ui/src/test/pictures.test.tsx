// Pictures in the window: pasted, dropped or picked into the message box, sent with the
// message, shown in the transcript and on tool cards, opened whole; picture files of the
// workspace open in their own view.
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { createFakeBackend } from "../api/fake";
import { SAMPLE_PNG } from "../api/fake/pictures";
import type { Picture, SessionView } from "../api/types";
import { initialRunState, runReducer } from "../state/run";
import { renderApp, runFinished } from "./helpers";

function bytesOf(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function pngFile(name: string): File {
  return new File([bytesOf(SAMPLE_PNG) as BlobPart], name, { type: "image/png" });
}

/** Pastes `files` into the message box as a screenshot comes: files, and no text. */
function paste(files: File[]) {
  const items = files.map((f) => ({ kind: "file", type: f.type, getAsFile: () => f }));
  fireEvent.paste(screen.getByTestId("composer"), { clipboardData: { files, items, types: ["Files"] } });
}

async function readyPictures(count: number): Promise<HTMLElement[]> {
  await waitFor(() => {
    const ready = screen.queryAllByTestId("composer-picture").filter((el) => el.dataset.ready === "true");
    expect(ready).toHaveLength(count);
    ready.forEach((el) => expect(el.querySelector("img")).not.toBeNull());
  });
  return screen.getAllByTestId("composer-picture");
}

describe("pictures in the message box", () => {
  it("takes a pasted screenshot as a thumbnail, lets one go with ×, and sends the rest with the message", async () => {
    const { fake, user } = await renderApp();
    const send = vi.spyOn(fake, "sendMessage");
    paste([pngFile("first.png")]);
    paste([pngFile("second.png")]);
    const shown = await readyPictures(2);
    const img = shown[0]?.querySelector("img");
    expect(img?.getAttribute("src")).toBe(`data:image/png;base64,${SAMPLE_PNG}`);
    expect(img).toHaveAttribute("alt", "first.png");

    await user.click(screen.getByRole("button", { name: "Remove first.png" }));
    await readyPictures(1);
    // Pictures alone make a message: Send is enabled without text.
    expect(screen.getByTestId("send-button")).toBeEnabled();
    await user.type(screen.getByTestId("composer"), "{Enter}");
    expect(send).toHaveBeenCalledTimes(1);
    const [text, , pictures] = send.mock.calls[0] ?? [];
    expect(text).toBe("");
    expect((pictures ?? []).map((p) => [p.name, p.width, p.height])).toEqual([["second.png", 160, 100]]);
    expect(screen.queryAllByTestId("composer-picture")).toHaveLength(0);

    // The message shows its picture; the model's limit is said as other notices are.
    await runFinished();
    const message = screen.getByTestId("message-user");
    const thumb = await within(message).findByTestId("picture-thumb");
    await waitFor(() => expect(thumb.querySelector("img")).not.toBeNull());
    expect(message.querySelector(".bubble")).toBeNull();
    expect(screen.getByText(/does not see pictures: it was given the text read from the picture/)).toBeInTheDocument();
  });

  it("says why a file that is not a picture was refused and attaches nothing", async () => {
    const { fake } = await renderApp();
    const attach = vi.spyOn(fake, "attachPicture");
    paste([new File(["just words"], "notes.png", { type: "image/png" })]);
    expect(await screen.findByText(/notes\.png: its bytes are not a picture Cairn reads/)).toBeInTheDocument();
    expect(attach).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(screen.queryAllByTestId("composer-picture")).toHaveLength(0));
    expect(screen.getByTestId("send-button")).toBeDisabled();
  });

  it("takes pictures dropped onto the window and picked in the dialog", async () => {
    const { fake, user } = await renderApp();
    const dropped = await fake.attachPicture("dropped.png", SAMPLE_PNG);
    act(() => fake.emitApp({ type: "files_dropped", added: [], pictures: [dropped], refused: [] }));
    await readyPictures(1);
    expect(screen.getByTestId("composer")).toHaveValue("");
    await user.click(screen.getByTestId("attach-picture"));
    const shown = await readyPictures(2);
    expect(shown[1]?.querySelector("img")).toHaveAttribute("alt", "hills.png");
    fake.answerDialogs("cancel");
    await user.click(screen.getByTestId("attach-picture"));
    await readyPictures(2);
  });
});

describe("pictures in the transcript", () => {
  it("shows a message's pictures as thumbnails that open whole over the window until Esc", async () => {
    const { user } = await renderApp();
    paste([pngFile("receipt.png")]);
    await readyPictures(1);
    await user.type(screen.getByTestId("composer"), "What is the total?{Enter}");
    await runFinished();
    const message = screen.getByTestId("message-user");
    expect(message.querySelector(".bubble")).toHaveTextContent("What is the total?");
    await user.click(within(message).getByTestId("picture-thumb"));
    const overlay = await screen.findByTestId("picture-overlay");
    expect(overlay).toHaveTextContent("receipt.png · 160 × 100 px · 840 B");
    await waitFor(() => expect(within(overlay).getByTestId("picture-full")).toHaveAttribute("src", `data:image/png;base64,${SAMPLE_PNG}`));
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("picture-overlay")).toBeNull());
    // Esc closed the picture, nothing else: no run was stopped, the message box still works.
    expect(screen.getByTestId("composer")).toBeEnabled();
  });

  it("keeps a picture open while the run that sent it ends and the transcript is drawn again", async () => {
    const { user } = await renderApp({ delayMs: 20 });
    paste([pngFile("plan.png")]);
    await readyPictures(1);
    await user.type(screen.getByTestId("composer"), "Look{Enter}");
    const live = await within(screen.getByTestId("message-user")).findByTestId("picture-thumb");
    expect(screen.getByTestId("stop-button")).toBeInTheDocument();
    await user.click(live);
    expect(await screen.findByTestId("picture-overlay")).toHaveTextContent("plan.png");
    await runFinished();
    // The message was drawn again from the stored session; the picture is still open.
    await waitFor(() => expect(live).not.toBeInTheDocument());
    expect(screen.getByTestId("picture-overlay")).toHaveTextContent("plan.png");
  });

  it("shows the pictures a tool gave on its card, with the text read in them in the full view", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    const base = await fake.attachPicture("scan.png", SAMPLE_PNG);
    const picture: Picture = { ...base, text: "Invoice total: 42.50 EUR" };
    const view: SessionView = {
      id: "s-pictures",
      title: "A scan",
      leaf: "a1",
      branches: 1,
      last_run: null,
      thinking: null,
      interrupted: null,
      running: false,
      items: [
        { kind: "user", entry_id: "u1", text: "Read scan.png", pictures: [], siblings: null },
        {
          kind: "assistant",
          entry_id: "a1",
          text: "It is a receipt.",
          tool_calls: [{ call_id: "c1", name: "read_file", arguments: { path: "scan.png" }, result: { content: "scan.png: a picture", is_error: false, pictures: [picture] } }],
          stop: "end_turn",
        },
      ],
    };
    fake.openSession = async () => view;
    const user = userEvent.setup({ delay: null });
    render(<App backend={fake} />);
    const card = await screen.findByTestId("tool-card");
    const thumb = within(card).getByTestId("picture-thumb");
    await user.click(thumb);
    const overlay = await screen.findByTestId("picture-overlay");
    await user.click(within(overlay).getByText("Text read from the picture"));
    expect(within(overlay).getByText("Invoice total: 42.50 EUR")).toBeVisible();
    await user.click(within(overlay).getByRole("button", { name: "Close" }));
    await waitFor(() => expect(screen.queryByTestId("picture-overlay")).toBeNull());
  });
});

describe("picture files of the workspace", () => {
  const files = {
    "AGENTS.md": "# A\n",
    "photos/hills.png": `data:image/png;base64,${SAMPLE_PNG}`,
    "photos/broken.png": "not a picture\n",
  };

  it("open in a picture view with their size and text instead of the editor", async () => {
    const { user } = await renderApp({ files, documents: {}, folders: [] });
    const tree = screen.getByTestId("file-tree");
    await within(tree).findByText("photos");
    if (!within(tree).queryByText("hills.png")) await user.click(within(tree).getByText("photos"));
    await user.click(await within(tree).findByText("hills.png"));
    const view = await screen.findByTestId("picture-view");
    expect(await within(view).findByTestId("picture-size")).toHaveTextContent("160 × 100 px · 840 B");
    expect(within(view).getByRole("img", { name: "hills.png" })).toHaveAttribute("src", `data:image/png;base64,${SAMPLE_PNG}`);
    expect(within(view).getByText("No text was found in it.")).toBeInTheDocument();
    await user.click(within(view).getByRole("button", { name: /Show hills\.png over the window/ }));
    expect(await screen.findByTestId("picture-overlay")).toHaveTextContent("hills.png · 160 × 100 px");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("picture-overlay")).toBeNull());

    await user.click(within(tree).getByText("broken.png"));
    await waitFor(() => expect(within(screen.getByTestId("picture-view")).getByRole("alert")).toHaveTextContent(/broken\.png: its bytes are not a picture/));
  });
});

describe("the run's view of pictures", () => {
  it("shows a message's pictures from the start, and keeps them once the message is stored", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    const picture = await fake.attachPicture("a.png", SAMPLE_PNG);
    let s = runReducer(initialRunState, { type: "begin", sessionId: "s", text: "", pictures: [picture], cutAt: null, now: 0 });
    expect(s.items).toMatchObject([{ kind: "user", entry_id: null, text: "", pictures: [picture] }]);
    expect(s.details).toMatchObject({ prompt: "", pictures: [picture] });
    s = runReducer(s, { type: "event", event: { type: "message_end", entry_id: "u1", message: { role: "user", content: [{ type: "image", ...picture }] } } });
    expect(s.items).toHaveLength(1);
    expect(s.items[0]).toMatchObject({ kind: "user", entry_id: "u1", pictures: [picture] });
  });
});
