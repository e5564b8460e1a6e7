import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { renderApp } from "./helpers";

const tree = () => screen.getByTestId("file-tree");
const row = (path: string) => within(tree()).queryByTestId((id, el) => id === "tree-item" && el?.getAttribute("data-path") === path);

async function prompt() {
  const dialog = await screen.findByTestId("path-prompt");
  return { dialog, input: within(dialog).getByRole("textbox") };
}

describe("workspace pane", () => {
  it("makes a new file, opens it, and refuses a name that is taken without touching that file", async () => {
    const { fake, user } = await renderApp();
    await user.click(within(tree()).getByRole("button", { name: "New file" }));
    const { dialog, input } = await prompt();
    expect(input).toHaveValue("knowledge/");
    await user.type(input, "ideas.md{Enter}");
    await waitFor(() => expect(screen.queryByTestId("path-prompt")).toBeNull());
    expect(await screen.findByRole("tab", { name: /ideas\.md/ })).toHaveAttribute("aria-selected", "true");
    await waitFor(() => expect(row("knowledge/ideas.md")).not.toBeNull());
    expect(dialog).not.toBeInTheDocument();

    const before = (await fake.readFile("knowledge/garden.md")).text;
    await user.click(within(tree()).getByRole("button", { name: "New file" }));
    const again = await prompt();
    await user.type(again.input, "garden.md");
    await user.click(within(again.dialog).getByRole("button", { name: "Create" }));
    expect(await within(again.dialog).findByRole("alert")).toHaveTextContent(/already exists/);
    expect((await fake.readFile("knowledge/garden.md")).text).toBe(before);
  });

  it("renames the open file from its menu, and the editor follows it", async () => {
    const { fake, user } = await renderApp();
    await user.click(await screen.findByRole("button", { name: "garden.md" }));
    expect(await screen.findByRole("tab", { name: /garden\.md/ })).toBeInTheDocument();
    await user.click(within(tree()).getByRole("button", { name: "Actions for knowledge/garden.md" }));
    await user.click(within(tree()).getByRole("menuitem", { name: "Rename or move…" }));
    const { input } = await prompt();
    expect(input).toHaveValue("knowledge/garden.md");
    await user.clear(input);
    await user.type(input, "projects/garden/plants.md{Enter}");
    await waitFor(() => expect(row("projects/garden/plants.md")).not.toBeNull());
    expect(row("knowledge/garden.md")).toBeNull();
    expect(fake.exists("knowledge/garden.md")).toBe(false);
    expect(await screen.findByRole("tab", { name: /plants\.md/ })).toHaveAttribute("aria-selected", "true");
  });

  it("deletes into the trash: Undo puts it back, and so does Restore in the trash", async () => {
    const { fake, user } = await renderApp();
    await waitFor(() => expect(row("knowledge/cairn.md")).not.toBeNull());
    const text = (await fake.readFile("knowledge/cairn.md")).text;
    fireEvent.contextMenu(row("knowledge/cairn.md") as HTMLElement);
    await user.click(within(tree()).getByRole("menuitem", { name: "Delete" }));
    expect(await screen.findByTestId("deleted-notice")).toHaveTextContent("Moved knowledge/cairn.md to the trash.");
    await waitFor(() => expect(row("knowledge/cairn.md")).toBeNull());
    await user.click(within(screen.getByTestId("deleted-notice")).getByRole("button", { name: "Undo" }));
    await waitFor(() => expect(row("knowledge/cairn.md")).not.toBeNull());
    expect((await fake.readFile("knowledge/cairn.md")).text).toBe(text);

    // The Delete key on a row, then the trash.
    (row("knowledge/cairn.md") as HTMLElement).focus();
    await user.keyboard("{Delete}");
    await waitFor(() => expect(row("knowledge/cairn.md")).toBeNull());
    await user.click(within(tree()).getByRole("button", { name: "Trash" }));
    const trash = await screen.findByTestId("trash-dialog");
    const item = await within(trash).findByTestId("trash-item");
    expect(item).toHaveTextContent("knowledge/cairn.md");
    await user.click(within(item).getByRole("button", { name: "Restore knowledge/cairn.md" }));
    await waitFor(() => expect(row("knowledge/cairn.md")).not.toBeNull());
    expect(within(trash).getByText("The trash is empty.")).toBeInTheDocument();
  });

  it("makes a folder, renames with F2 and shows an entry in the file manager", async () => {
    const { fake, user } = await renderApp();
    await user.click(within(tree()).getByRole("button", { name: "New folder" }));
    const { input } = await prompt();
    await user.type(input, "knowledge/trips{Enter}");
    await waitFor(() => expect(row("knowledge/trips")).not.toBeNull());
    (row("knowledge/trips") as HTMLElement).focus();
    await user.keyboard("{F2}");
    const renamed = await prompt();
    await user.clear(renamed.input);
    await user.type(renamed.input, "knowledge/travel{Enter}");
    await waitFor(() => expect(row("knowledge/travel")).not.toBeNull());
    await user.click(within(tree()).getByRole("button", { name: "Actions for knowledge/travel" }));
    await user.click(within(tree()).getByRole("menuitem", { name: "Show in file manager" }));
    await waitFor(() => expect(fake.revealed()).toEqual(["knowledge/travel"]));
    // A folder cannot move into itself; the reason is shown.
    await user.click(within(tree()).getByRole("button", { name: "Actions for knowledge/travel" }));
    await user.click(within(tree()).getByRole("menuitem", { name: "Rename or move…" }));
    const inside = await prompt();
    await user.clear(inside.input);
    await user.type(inside.input, "knowledge/travel/again{Enter}");
    expect(await within(inside.dialog).findByRole("alert")).toHaveTextContent(/into itself/);
  });
});

describe("workspace pane failures", () => {
  it("keeps an action's error on screen while the tree reloads", async () => {
    const { fake, user } = await renderApp();
    await waitFor(() => expect(row("knowledge/garden.md")).not.toBeNull());
    fake.trashPath = () => Promise.reject(new Error("the disk is full"));
    fireEvent.contextMenu(row("knowledge/garden.md") as HTMLElement);
    await user.click(within(tree()).getByRole("menuitem", { name: "Delete" }));
    expect(await within(tree()).findByRole("alert")).toHaveTextContent("the disk is full");
    fake.emitApp({ type: "files_changed" });
    await new Promise((r) => setTimeout(r, 200));
    expect(within(tree()).getByRole("alert")).toHaveTextContent("the disk is full");
    expect(row("knowledge/garden.md")).not.toBeNull();
  });
});
