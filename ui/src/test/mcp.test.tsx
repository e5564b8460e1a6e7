import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { renderApp } from "./helpers";

async function openMcp() {
  const app = await renderApp();
  await app.user.click(screen.getByTestId("settings-button"));
  const dialog = await screen.findByTestId("settings-dialog");
  const section = await within(dialog).findByTestId("mcp-servers");
  await within(section).findAllByTestId("mcp-server");
  return { ...app, section };
}

function server(section: HTMLElement, name: string): HTMLElement {
  const found = within(section)
    .getAllByTestId("mcp-server")
    .find((el) => el.querySelector("strong")?.textContent === name);
  if (!found) throw new Error(`no server ${name}`);
  return found;
}

describe("MCP servers in the settings", () => {
  it("lists each server with its state, its tools, and why one failed", async () => {
    const { section } = await openMcp();
    const everything = server(section, "everything");
    expect(within(everything).getByTestId("mcp-state")).toHaveTextContent("running");
    expect(within(everything).getByText("2 tools")).toBeInTheDocument();
    expect(within(everything).getByText("everything__get-sum")).toBeInTheDocument();
    const tickets = server(section, "tickets");
    expect(within(tickets).getByTestId("mcp-state")).toHaveTextContent("failed");
    expect(within(tickets).getByTestId("mcp-error")).toHaveTextContent("`tickets-mcp --stdio` could not be started");
  });

  it("adds, disables and removes a server at once", async () => {
    const { fake, user, section } = await openMcp();
    const add = vi.spyOn(fake, "addMcpServer");
    await user.type(within(section).getByLabelText("Server name"), "files");
    await user.type(within(section).getByLabelText("Command"), "npx -y @modelcontextprotocol/server-filesystem /tmp");
    await user.click(within(section).getByRole("button", { name: "Add server" }));
    expect(add).toHaveBeenCalledWith({ name: "files", command: "npx -y @modelcontextprotocol/server-filesystem /tmp", url: "" });
    await waitFor(() => expect(server(section, "files")).toBeInTheDocument());
    expect(within(section).getByLabelText("Server name")).toHaveValue("");

    await user.click(within(server(section, "everything")).getByLabelText("Enable everything"));
    await waitFor(() => expect(within(server(section, "everything")).getByTestId("mcp-state")).toHaveTextContent("disabled"));
    expect((await fake.mcpServers(false)).find((s) => s.name === "everything")?.enabled).toBe(false);

    await user.click(within(server(section, "tickets")).getByRole("button", { name: "Remove tickets" }));
    await waitFor(() => expect(within(section).queryByText("tickets")).toBeNull());
  });

  it("says what is wrong with a server that cannot be added", async () => {
    const { user, section } = await openMcp();
    await user.type(within(section).getByLabelText("Server name"), "a__b");
    await user.type(within(section).getByLabelText("Command"), "x");
    await user.click(within(section).getByRole("button", { name: "Add server" }));
    expect(await within(section).findByTestId("mcp-problem")).toHaveTextContent("without `__`");
    expect(within(section).getByLabelText("Server name")).toHaveValue("a__b");
  });
});
