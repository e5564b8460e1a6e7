import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { renderApp, runFinished } from "./helpers";

async function withTwoSessions() {
  const app = await renderApp();
  await app.user.type(screen.getByTestId("composer"), "about tomatoes{Enter}");
  await runFinished();
  await app.user.click(screen.getByTestId("new-session"));
  await waitFor(() => expect(screen.queryByTestId("message-user")).toBeNull());
  await app.user.type(screen.getByTestId("composer"), "about basil{Enter}");
  await runFinished();
  await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(2));
  return app;
}

describe("sessions", () => {
  it("lists sessions newest first, highlights the open one and switches", async () => {
    const { fake, user } = await withTwoSessions();
    const items = screen.getAllByTestId("session-item");
    expect(items[0]).toHaveTextContent("about basil");
    expect(items[0]).toHaveClass("active");
    expect(items[1]).toHaveTextContent("about tomatoes");
    const open = vi.spyOn(fake, "openSession");
    await user.click(within(items[1] as HTMLElement).getByText("about tomatoes"));
    expect(open).toHaveBeenCalledWith(items[1]?.getAttribute("data-id"));
    await waitFor(() => expect(screen.getByTestId("message-user")).toHaveTextContent("about tomatoes"));
  });

  it("makes a new session with Ctrl+N", async () => {
    const { fake, user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hello{Enter}");
    await runFinished();
    const open = vi.spyOn(fake, "openSession");
    await user.keyboard("{Control>}n{/Control}");
    expect(open).toHaveBeenCalledWith(null);
    await waitFor(() => expect(screen.queryByTestId("message-user")).toBeNull());
    expect(screen.getByText("What shall we work on?")).toBeInTheDocument();
  });

  it("finds sessions by title", async () => {
    const { user } = await withTwoSessions();
    await user.type(screen.getByLabelText("Find sessions by title or text"), "basil");
    expect(screen.getAllByTestId("session-item")).toHaveLength(1);
    await user.clear(screen.getByLabelText("Find sessions by title or text"));
    await user.type(screen.getByLabelText("Find sessions by title or text"), "zyxwv");
    await new Promise((r) => setTimeout(r, 300));
    expect(screen.queryAllByTestId("session-item")).toHaveLength(0);
    expect(screen.getByText("No session matches.")).toBeInTheDocument();
  });

  it("finds sessions by what was said in them, with the matching part", async () => {
    const { user } = await withTwoSessions();
    await user.type(screen.getByTestId("composer"), "the greenhouse needs paint{Enter}");
    await runFinished();
    await user.type(screen.getByLabelText("Find sessions by title or text"), "greenhouse");
    const snippet = await screen.findByTestId("session-snippet");
    expect(snippet).toHaveTextContent("the greenhouse needs paint");
    const items = screen.getAllByTestId("session-item");
    expect(items).toHaveLength(1);
    expect(items[0]).toHaveTextContent("about basil");
  });

  it("renames inline on double-click: Enter saves, Esc cancels", async () => {
    const { fake, user } = await withTwoSessions();
    const rename = vi.spyOn(fake, "renameSession");
    const item = screen.getAllByTestId("session-item")[1] as HTMLElement;
    await user.dblClick(within(item).getByText("about tomatoes"));
    const input = within(item).getByLabelText("Session title");
    await user.clear(input);
    await user.type(input, "Tomato plans{Enter}");
    expect(rename).toHaveBeenCalledWith(item.getAttribute("data-id"), "Tomato plans");
    await waitFor(() => expect(item).toHaveTextContent("Tomato plans"));

    await user.click(within(item).getByRole("button", { name: /Actions for/ }));
    await user.click(within(item).getByRole("menuitem", { name: "Rename" }));
    await user.type(within(item).getByLabelText("Session title"), " extra{Escape}");
    expect(rename).toHaveBeenCalledTimes(1);
    expect(item).toHaveTextContent("Tomato plans");
  });

  it("deletes after a confirmation", async () => {
    const { fake, user } = await withTwoSessions();
    const del = vi.spyOn(fake, "deleteSession");
    const item = screen.getAllByTestId("session-item")[0] as HTMLElement;
    const id = item.getAttribute("data-id");
    await user.click(within(item).getByRole("button", { name: /Actions for/ }));
    await user.click(within(item).getByRole("menuitem", { name: /Delete/ }));
    await user.click(within(item).getByRole("button", { name: "Cancel" }));
    expect(del).not.toHaveBeenCalled();
    await user.click(within(item).getByRole("button", { name: /Actions for/ }));
    await user.click(within(item).getByRole("menuitem", { name: /Delete/ }));
    await user.click(within(item).getByRole("button", { name: "Delete" }));
    expect(del).toHaveBeenCalledWith(id);
    await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(1));
    // The open session was deleted: the other one opens.
    await waitFor(() => expect(screen.getByTestId("message-user")).toHaveTextContent("about tomatoes"));
  });
});

describe("sessions in and out", () => {
  it("exports a session as Markdown through the save dialog, and says nothing when it is cancelled", async () => {
    const { fake, user } = await withTwoSessions();
    const item = screen.getAllByTestId("session-item")[1] as HTMLElement;
    const id = item.getAttribute("data-id") ?? "";
    fake.answerDialogs("cancel");
    await user.click(within(item).getByRole("button", { name: /Actions for/ }));
    await user.click(within(item).getByRole("menuitem", { name: "Export as Markdown…" }));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByText(/^Saved /)).toBeNull();
    fake.answerDialogs("pick");
    await user.click(within(item).getByRole("button", { name: /Actions for/ }));
    await user.click(within(item).getByRole("menuitem", { name: "Export as Markdown…" }));
    expect(await screen.findByText(/^Saved \/home\/ada\/about tomatoes.*\.md$/)).toBeInTheDocument();
    expect(fake.exported()).toEqual([id]);
  });

  it("imports conversations from an export and lists them", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByRole("button", { name: "Import conversations from ChatGPT or Claude" }));
    expect(await screen.findByText("Imported 1 conversation from ChatGPT.")).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId("session-item").some((i) => i.textContent?.includes("Imported: tea"))).toBe(true));
  });
});
