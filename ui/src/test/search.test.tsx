import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { indexStatusText } from "../components/IndexStatusText";
import { meaningNote } from "../components/SearchPanel";
import { editorView, renderApp } from "./helpers";

describe("memory search (Ctrl+K)", () => {
  it("says how much the index holds in words that agree with the numbers", () => {
    const base = { catching_up: false, read_only: false, last_error: null, embedding_model: null, embedded: 0, to_embed: 0, embed_error: null, folders_unavailable: [] };
    expect(indexStatusText({ ...base, files: 1, chunks: 1 })).toBe("1 file · 1 chunk · up to date");
    expect(indexStatusText({ ...base, files: 1204, chunks: 0, catching_up: true })).toBe("1,204 files · 0 chunks · catching up…");
  });

  it("shows the embedding's progress until every chunk has its vector", () => {
    const base = { files: 9, chunks: 100000, catching_up: false, read_only: false, last_error: null, embed_error: null, folders_unavailable: [] };
    const model = "all-MiniLM-L6-v2";
    expect(indexStatusText({ ...base, embedding_model: model, embedded: 12400, to_embed: 100000 })).toBe(
      "9 files · 100,000 chunks · up to date · embedding 12,400 / 100,000",
    );
    expect(indexStatusText({ ...base, embedding_model: model, embedded: 100000, to_embed: 100000 })).toBe("9 files · 100,000 chunks · up to date");
    // Keyword-only, or stopped on an error (shown apart): no progress that never moves.
    expect(indexStatusText({ ...base, embedding_model: null, embedded: 0, to_embed: 0 })).toBe("9 files · 100,000 chunks · up to date");
    expect(indexStatusText({ ...base, embedding_model: model, embedded: 5, to_embed: 9, embed_error: "no model" })).toBe("9 files · 100,000 chunks · up to date");
  });

  it("says when hits were found by meaning, and how much of the index it covered", async () => {
    const base = { hits: [], stale: false, took_ms: 1, mode: null, coverage: null };
    expect(meaningNote({ ...base, mode: "keyword" })).toBe("");
    expect(meaningNote(base)).toBe("");
    expect(meaningNote({ ...base, mode: "hybrid", coverage: { embedded: 9, chunks: 9 } })).toBe(" · by words and meaning");
    expect(meaningNote({ ...base, mode: "semantic", coverage: { embedded: 1200, chunks: 5000 } })).toBe(
      " · by meaning (meaning covers 1,200 of 5,000 chunks so far)",
    );
    const { fake, user } = await renderApp();
    const found = await fake.memorySearch("watering", 20);
    vi.spyOn(fake, "memorySearch").mockResolvedValue({ ...found, took_ms: 172.217016, mode: "hybrid", coverage: { embedded: 12400, chunks: 100000 } });
    await user.keyboard("{Control>}k{/Control}");
    await user.keyboard("watering");
    await screen.findAllByTestId("search-hit");
    expect(await screen.findByText(/by words and meaning \(meaning covers 12,400 of 100,000 chunks so far\)/)).toBeInTheDocument();
    // The time in whole milliseconds, not the fractions it comes in.
    expect(screen.getByText(/results? in 172 ms/, { selector: ".search-status *" })).toBeInTheDocument();
  });

  it("shows hits with highlighted parts and opens one at its lines", async () => {
    const { fake, user } = await renderApp();
    const search = vi.spyOn(fake, "memorySearch");
    await user.keyboard("{Control>}k{/Control}");
    const box = await screen.findByTestId("search-box");
    expect(box).toHaveFocus();
    await user.keyboard("watering");
    const hits = await screen.findAllByTestId("search-hit");
    expect(search).toHaveBeenLastCalledWith("watering", 20);
    expect(search.mock.calls.length).toBeLessThanOrEqual(2); // debounced, not once per key
    const garden = hits.find((h) => h.getAttribute("data-path") === "knowledge/garden.md");
    expect(garden).toBeDefined();
    const marks = garden?.querySelectorAll("mark") ?? [];
    expect(marks.length).toBeGreaterThan(0);
    expect([...marks].every((m) => m.textContent?.toLowerCase() === "watering")).toBe(true);
    expect(within(garden as HTMLElement).getByText(/^L\d+/)).toBeInTheDocument();
    expect(screen.getByText(/files · \d+ chunks · up to date/, { selector: ".search-status *" })).toBeInTheDocument();

    const start = Number(garden?.getAttribute("data-start-line"));
    await user.click(garden as HTMLElement);
    expect(screen.queryByTestId("search-box")).toBeNull();
    const view = await editorView();
    await waitFor(() => expect(view.state.doc.toString()).toContain("Tomatoes need deep watering"));
    const sel = view.state.selection.main;
    expect(view.state.doc.lineAt(sel.from).number).toBe(start);
    expect(screen.getByTestId("editor").querySelectorAll(".cm-jump-line").length).toBeGreaterThan(0);
  });

  it("builds snippets as text: markup in a file stays text", async () => {
    const { user } = await renderApp({ files: { "notes.md": "# Notes\n\nwatering <img src=x onerror=alert(1)> schedule\n" } });
    await user.keyboard("{Control>}k{/Control}");
    await screen.findByTestId("search-box");
    await user.keyboard("watering");
    const hit = await screen.findByTestId("search-hit");
    expect(hit.querySelector("img")).toBeNull();
    expect(hit).toHaveTextContent("<img src=x onerror=alert(1)>");
  });

  it("moves with the arrow keys, opens with Enter and closes with Esc", async () => {
    const { user } = await renderApp();
    await user.keyboard("{Control>}k{/Control}");
    await screen.findByTestId("search-box");
    await user.keyboard("tomatoes basil");
    const hits = await screen.findAllByTestId("search-hit");
    expect(hits.length).toBeGreaterThan(1);
    expect(hits[0]).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{ArrowDown}");
    expect(screen.getAllByTestId("search-hit")[1]).toHaveAttribute("aria-selected", "true");
    const second = screen.getAllByTestId("search-hit")[1];
    const path = second?.getAttribute("data-path") ?? "";
    await user.keyboard("{Enter}");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toBeInTheDocument());
    expect(screen.getByText(path, { selector: ".editor-path" })).toBeInTheDocument();

    await user.keyboard("{Control>}k{/Control}");
    await screen.findByTestId("search-box");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("search-box")).toBeNull();
  });

  it("shows the index status in the status bar and follows index_status events", async () => {
    const { fake } = await renderApp();
    await waitFor(() => expect(screen.getByTestId("index-status")).toHaveTextContent(/up to date/));
    fake.emitApp({ type: "index_status", status: { files: 3, chunks: 9, catching_up: true, read_only: true, last_error: null, embedding_model: null, embedded: 0, to_embed: 0, embed_error: null, folders_unavailable: [] } });
    await waitFor(() => expect(screen.getByTestId("index-status")).toHaveTextContent("3 files · 9 chunks · catching up… · read-only"));
    fake.emitApp({ type: "index_status", status: { files: 3, chunks: 9, catching_up: false, read_only: false, last_error: null, embedding_model: null, embedded: 0, to_embed: 0, embed_error: null, folders_unavailable: ["/media/usb/Notes: it does not exist"] } });
    await waitFor(() => expect(screen.getByTestId("folder-unavailable")).toHaveTextContent("not searched: /media/usb/Notes: it does not exist"));
  });
});
