import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { editorView, renderApp, typeInEditor } from "./helpers";

const PATH = "knowledge/garden.md";

async function openGarden() {
  const app = await renderApp();
  await app.user.click(await screen.findByRole("button", { name: "garden.md" }));
  const view = await editorView();
  await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("saved"));
  return { ...app, view };
}

describe("file editor", () => {
  it("opens a file from the tree in CodeMirror", async () => {
    const { fake, view } = await openGarden();
    expect(view.state.doc.toString()).toBe((await fake.readFile(PATH)).text);
    expect(screen.getByTestId("editor").querySelector(".cm-lineNumbers")).not.toBeNull();
    expect(await screen.findByRole("tab", { name: /garden\.md/ })).toHaveAttribute("aria-selected", "true");
  });

  it("saves with Ctrl+S against the version it read", async () => {
    const { fake, user, view } = await openGarden();
    const write = vi.spyOn(fake, "writeFile");
    const { version } = await fake.readFile(PATH);
    typeInEditor(view, "\nA new line.\n");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("modified"));
    view.focus();
    await user.keyboard("{Control>}s{/Control}");
    expect(write).toHaveBeenCalledWith(PATH, view.state.doc.toString(), version);
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("saved"));
    expect((await fake.readFile(PATH)).text).toContain("A new line.");
  });

  it("shows the conflict bar on a conflict, and Overwrite writes with no base", async () => {
    const { fake, user, view } = await openGarden();
    typeInEditor(view, "mine\n");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("modified"));
    fake.editOutside(PATH, "# Garden\n\nchanged elsewhere\n");
    await screen.findByText(/changed on disk; you have unsaved changes/);
    expect(view.state.doc.toString()).toContain("mine");
    const write = vi.spyOn(fake, "writeFile");
    await user.keyboard("{Control>}s{/Control}");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("conflict"));
    expect(screen.getByTestId("conflict-reload")).toBeInTheDocument();
    await user.click(screen.getByTestId("conflict-overwrite"));
    expect(write).toHaveBeenLastCalledWith(PATH, view.state.doc.toString(), null);
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("saved"));
    expect((await fake.readFile(PATH)).text).toContain("mine");
  });

  it("compares and reloads on a conflict", async () => {
    const { fake, user, view } = await openGarden();
    typeInEditor(view, "mine\n");
    fake.editOutside(PATH, "disk version\n");
    await user.keyboard("{Control>}s{/Control}");
    await screen.findByTestId("conflict-compare");
    await user.click(screen.getByTestId("conflict-compare"));
    const compare = await screen.findByTestId("compare-view");
    await waitFor(() => expect(compare.querySelector(".cm-mergeView")).not.toBeNull());
    const [disk, mine] = [...compare.querySelectorAll(".cm-editor")];
    expect(disk).toHaveTextContent("disk version");
    expect(mine).toHaveTextContent("mine");
    expect(disk?.querySelectorAll(".cm-changedLine").length).toBeGreaterThan(0);
    expect(mine?.querySelectorAll(".cm-changedLine").length).toBeGreaterThan(0);
    await user.click(screen.getByTestId("conflict-reload"));
    await waitFor(() => expect(view.state.doc.toString()).toBe("disk version\n"));
    expect(screen.getByTestId("editor-status")).toHaveTextContent("saved");
    expect(screen.queryByTestId("compare-view")).toBeNull();
  });

  it("reloads an unmodified file silently when it changes outside", async () => {
    const { fake, view } = await openGarden();
    fake.editOutside(PATH, "# Garden\n\nwatered today\n");
    await waitFor(() => expect(view.state.doc.toString()).toBe("# Garden\n\nwatered today\n"));
    expect(screen.getByTestId("editor-status")).toHaveTextContent("saved");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("ignores the change event of its own save", async () => {
    const { fake, user, view } = await openGarden();
    const read = vi.spyOn(fake, "readFile");
    typeInEditor(view, "x\n");
    await user.keyboard("{Control>}s{/Control}");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("saved"));
    typeInEditor(view, "y\n");
    await new Promise((r) => setTimeout(r, 20));
    expect(read).not.toHaveBeenCalled();
    expect(screen.getByTestId("editor-status")).toHaveTextContent("modified");
    expect(screen.queryByText(/changed on disk/)).toBeNull();
  });

  it("asks before replacing unsaved text with another file", async () => {
    const { user, view } = await openGarden();
    typeInEditor(view, "unsaved\n");
    await waitFor(() => expect(screen.getByTestId("editor-status")).toHaveTextContent("modified"));
    await user.click(screen.getByRole("button", { name: "cairn.md" }));
    expect(await screen.findByText(/has unsaved changes/)).toBeInTheDocument();
    expect(view.state.doc.toString()).toContain("unsaved");
    await user.click(screen.getByRole("button", { name: "Discard and open" }));
    await waitFor(() => expect(view.state.doc.toString()).toContain("A local agent"));
  });

  it("refreshes the tree when files are added", async () => {
    const { fake } = await renderApp();
    await screen.findByTestId("file-tree");
    fake.editOutside("projects/plan.md", "# Plan\n");
    await waitFor(() => expect(document.querySelector('[data-testid="tree-item"][data-path="projects"]')).not.toBeNull());
  });
});

describe("markdown preview", () => {
  it("renders the open markdown file beside the editor and follows the typing", async () => {
    const { user, view } = await openGarden();
    expect(screen.queryByTestId("editor-preview")).toBeNull();
    await user.click(screen.getByRole("button", { name: "Preview" }));
    const preview = await screen.findByTestId("editor-preview");
    expect(within(preview).getByRole("heading", { name: "Watering" })).toBeInTheDocument();
    typeInEditor(view, "\n## Harvest\n");
    expect(await within(preview).findByRole("heading", { name: "Harvest" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Preview" })).toHaveAttribute("aria-pressed", "true");
    await user.click(screen.getByRole("button", { name: "Preview" }));
    expect(screen.queryByTestId("editor-preview")).toBeNull();
  });
});
