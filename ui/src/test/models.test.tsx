// The model picker in the chat header.
import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { renderApp, runFinished } from "./helpers";

describe("the model picker", () => {
  it("switches the open session to a configured provider from the next message", async () => {
    const { fake, user } = await renderApp({
      settings: {
        providers: [
          { name: "ollama", kind: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3.2:latest", model_path: null, context_window: 8192, vision: null, image_max_side: null, has_key: false },
          { name: "claude", kind: "anthropic", base_url: null, model: "claude-sonnet-4-5", model_path: null, context_window: null, vision: null, image_max_side: null, has_key: true },
        ],
        default_provider: "ollama",
      },
    });
    const choose = vi.spyOn(fake, "chooseModel");
    await user.click(screen.getByTestId("model-chip"));
    const menu = await screen.findByTestId("model-menu");
    await waitFor(() => expect(within(menu).getAllByTestId("model-option")).toHaveLength(2));
    await user.click(within(menu).getByText("claude"));
    expect(choose).toHaveBeenCalledWith("claude", null);
    await waitFor(() => expect(screen.getByTestId("model-chip")).toHaveTextContent("claude-sonnet-4-5"));
    expect(screen.queryByTestId("model-menu")).toBeNull();
    expect(screen.getByText(/goes on with claude-sonnet-4-5 \(claude\) from the next message/)).toBeInTheDocument();
  });

  it("offers Settings, and closes with Esc", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("model-chip"));
    await screen.findByTestId("model-menu");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("model-menu")).toBeNull();
    await user.click(screen.getByTestId("model-chip"));
    await user.click(await screen.findByRole("menuitem", { name: "Settings…" }));
    expect(await screen.findByTestId("settings-dialog")).toBeInTheDocument();
  });
});

describe("the thinking level", () => {
  it("is chosen per session, sent from the next call and read back when the session opens again", async () => {
    const { fake, user } = await renderApp();
    const set = vi.spyOn(fake, "setThinking");
    const picker = () => screen.getByTestId("thinking-level");
    expect(picker()).toHaveValue("");
    await user.selectOptions(picker(), "high");
    expect(set).toHaveBeenCalledWith("high");
    expect(picker()).toHaveValue("high");
    await user.type(screen.getByTestId("composer"), "think hard{Enter}");
    await runFinished();
    // A new session has its own level; the first keeps its own.
    await user.click(screen.getByTestId("new-session"));
    await waitFor(() => expect(picker()).toHaveValue(""));
    await user.click(await screen.findByText("think hard", { selector: ".session-item *" }));
    await waitFor(() => expect(picker()).toHaveValue("high"));
  });
});
