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
    act(() => fake.emitApp({ type: "files_dropped", added: ["knowledge/inbox/notes.md", "knowledge/car.md"], refused: [] }));
    expect(screen.queryByTestId("drop-hint")).toBeNull();
    expect(composer).toHaveValue("Summarise these\nAttached: `knowledge/inbox/notes.md`\nAttached: `knowledge/car.md`\n");
  });

  it("says which files were not added and why, and leaves the message alone", async () => {
    const { fake } = await renderApp();
    act(() => fake.emitApp({ type: "files_dropped", added: [], refused: [{ name: "photo.png", reason: "not a text file" }] }));
    await waitFor(() => expect(screen.getByText(/Not added: photo.png \(not a text file\)/)).toBeInTheDocument());
    expect(screen.getByTestId("composer")).toHaveValue("");
  });
});
