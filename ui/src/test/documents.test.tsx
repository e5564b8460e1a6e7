import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { editorView, renderApp } from "./helpers";

const PDF = "knowledge/inbox/tide-tables.pdf";

describe("documents and folders searched in place", () => {
  it("opens a document hit at its page in extracted text, and the original in the viewer", async () => {
    const { fake, user } = await renderApp();
    const found = await fake.memorySearch("watering", 20);
    const hit = { ...found.hits[0], path: PDF, page: 3, start_line: 1, end_line: 1, heading: "" };
    vi.spyOn(fake, "memorySearch").mockResolvedValue({ ...found, hits: [hit] });
    await user.keyboard("{Control>}k{/Control}");
    await user.keyboard("lowest tide");
    const hits = await screen.findAllByTestId("search-hit");
    expect(within(hits[0]).getByText(/p\. 3/)).toBeInTheDocument();
    await user.click(hits[0]);

    const view = await screen.findByTestId("document-view");
    await within(view).findByText(/lowest tide of the season/);
    expect(within(view).getByTestId("document-pages")).toHaveTextContent("3 pages");
    const target = view.querySelector(".document-page.target");
    expect(target).toHaveAttribute("data-page", "3");
    expect(target).toHaveTextContent("April: the lowest tide");
    // Every page is there under its number; the editor is not asked to open a binary file.
    expect(within(view).getByText("Page 1")).toBeInTheDocument();
    expect(screen.getByRole("tab", { name: /tide-tables\.pdf/ })).toBeInTheDocument();

    await user.click(within(view).getByTestId("open-in-viewer"));
    await waitFor(() => expect(fake.viewed()).toEqual([PDF]));
  });

  it("opens a document from the tree at its first page, and a file after it in the editor", async () => {
    const { user } = await renderApp();
    const tree = screen.getByTestId("file-tree");
    await user.click(await within(tree).findByText("inbox"));
    await user.click(await within(tree).findByText("tide-tables.pdf"));
    const view = await screen.findByTestId("document-view");
    await within(view).findByText(/High and low water/);
    expect(view.querySelector(".document-page.target")).toBeNull();
    await user.click(within(tree).getByText("garden.md"));
    await waitFor(() => expect(screen.queryByTestId("document-view")).toBeNull());
    expect((await editorView()).state.doc.toString()).toContain("# Garden");
  });

  it("says why a document cannot be read", async () => {
    const { user } = await renderApp({ files: { "scan.pdf": "%PDF", "AGENTS.md": "# A\n" }, documents: {}, folders: [] });
    await user.click(await within(screen.getByTestId("file-tree")).findByText("scan.pdf"));
    const view = await screen.findByTestId("document-view");
    expect(await within(view).findByRole("alert")).toHaveTextContent(/scan\.pdf/);
  });

  it("lists folders searched in place read-only, and opens their files without saving", async () => {
    const { fake, user } = await renderApp({
      folders: [
        { name: "Notes", root: "/home/ada/Notes", files: { "trips/croatia.md": "# Croatia\n\nSplit in June.\n" } },
        { name: "Papers", root: "", files: {}, problem: "/data/Papers: it does not exist" },
      ],
    });
    const section = await screen.findByTestId("outside-folders");
    expect(within(section).getByText("Searched in place")).toBeInTheDocument();
    expect(within(section).getByText("/data/Papers: it does not exist")).toBeInTheDocument();
    const notes = within(section).getAllByTestId("outside-folder")[0];
    expect(notes).toHaveAttribute("data-name", "Notes");
    expect(within(notes).getByText("Notes").closest("[title]")).toHaveAttribute("title", "/home/ada/Notes");
    await user.click(within(notes).getByText("trips"));
    await user.click(await within(notes).findByText("croatia.md"));

    const view = await editorView();
    expect(view.state.doc.toString()).toContain("Split in June");
    expect(view.state.readOnly).toBe(true);
    expect(screen.getByTestId("editor-read-only")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Save" })).toBeNull();
    const write = vi.spyOn(fake, "writeFile");
    await user.keyboard("{Control>}s{/Control}");
    expect(write).not.toHaveBeenCalled();

    // Its menu only shows it; nothing to rename, delete or create there.
    await user.click(within(notes).getByRole("button", { name: "Actions for Notes/trips/croatia.md" }));
    const menu = await screen.findByTestId("tree-menu");
    expect(within(menu).getAllByRole("menuitem").map((b) => b.textContent)).toEqual(["Show in file manager"]);
    await user.click(within(menu).getByRole("menuitem"));
    await waitFor(() => expect(fake.revealed()).toEqual(["Notes/trips/croatia.md"]));

    // Nor do the keys that delete (Delete) and rename (F2) a workspace file: nothing is asked of
    // the backend, no rename dialog opens, and the file stays listed and open.
    const trash = vi.spyOn(fake, "trashPath");
    const row = within(notes).getByText("croatia.md").closest("button") as HTMLElement;
    row.focus();
    await user.keyboard("{Delete}");
    expect(trash).not.toHaveBeenCalled();
    await user.keyboard("{F2}");
    expect(screen.queryByTestId("path-prompt")).toBeNull();
    expect(within(screen.getByTestId("file-tree")).queryByRole("alert")).toBeNull();
    expect(within(notes).getByText("croatia.md")).toBeInTheDocument();
    expect(view.state.doc.toString()).toContain("Split in June");
  });

  it("adds a folder in the settings with the picker, and offers to restart to search it", async () => {
    const { fake, user } = await renderApp();
    await user.click(screen.getByTestId("settings-button"));
    const field = await screen.findByTestId("memory-folders");
    expect(within(field).getByText("~/Notes")).toBeInTheDocument();
    await user.click(within(field).getByRole("button", { name: "Add folder…" }));
    await within(field).findByText("/home/ada/Papers");
    await user.type(within(field).getByLabelText("Folder path"), "Notes");
    await user.click(within(field).getByRole("button", { name: "Add" }));
    expect(within(field).getByRole("alert")).toHaveTextContent("not a full path");
    await user.click(within(field).getByRole("button", { name: "Stop searching ~/Notes" }));
    await user.click(screen.getByRole("button", { name: "Save" }));

    expect(await screen.findByTestId("restart-notice")).toHaveTextContent("from its next start");
    expect((await fake.getSettings()).folders).toEqual(["/home/ada/Papers"]);
    await user.click(screen.getByRole("button", { name: "Restart now" }));
    await waitFor(() => expect(fake.restarts()).toBe(1));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
  });

  it("closes the settings at once when the folders did not change", async () => {
    const { fake, user } = await renderApp();
    await user.click(screen.getByTestId("settings-button"));
    await screen.findByTestId("memory-folders");
    await user.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    expect(fake.restarts()).toBe(0);
  });
});
