import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { appError } from "../api/errors";
import { renderApp } from "./helpers";

const SECRET = "sk-test-SECRET-0123456789";

async function openSettings(opts: Parameters<typeof renderApp>[0] = {}) {
  const app = await renderApp(opts);
  await app.user.click(screen.getByTestId("settings-button"));
  const dialog = await screen.findByTestId("settings-dialog");
  await within(dialog).findAllByTestId("provider-card");
  return { ...app, dialog };
}

describe("settings", () => {
  it("finds local servers and adds a model as a provider with its real window", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const before = within(dialog).getAllByTestId("provider-card").length;
    await user.click(within(dialog).getByRole("button", { name: "Find local servers" }));
    const server = await within(dialog).findByTestId("local-server");
    expect(server).toHaveAttribute("data-kind", "ollama");
    expect(server).toHaveTextContent("llama3.2:latest");
    expect(server).toHaveTextContent("8,192 tokens");
    await user.click(within(server).getAllByTestId("add-found-model")[0] as HTMLElement);
    await user.click(within(server).getAllByTestId("add-found-model")[0] as HTMLElement);
    expect(within(dialog).getAllByTestId("provider-card")).toHaveLength(before + 2);
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    const saved = save.mock.calls[0]?.[0].providers.filter((p) => p.base_url === "http://127.0.0.1:11434/v1");
    // Named after the server, never over an existing name, with the window the server runs.
    expect(saved?.map((p) => [p.name, p.model, p.context_window])).toEqual([
      ["ollama", "llama3.2:latest", 8192],
      ["ollama-2", "llama3.2:latest", 8192],
    ]);
  });

  it("says so when no local server runs", async () => {
    const { fake, user, dialog } = await openSettings();
    vi.spyOn(fake, "discoverLocalServers").mockResolvedValue([]);
    await user.click(within(dialog).getByRole("button", { name: "Find local servers" }));
    expect(await within(dialog).findByText(/No model server found on this machine/)).toBeInTheDocument();
  });

  it("opens with Ctrl+, and closes with Esc", async () => {
    const { user } = await renderApp();
    await user.keyboard("{Control>},{/Control}");
    expect(await screen.findByTestId("settings-dialog")).toBeInTheDocument();
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("settings-dialog")).toBeNull();
  });

  it("saves run limits: steps, deadline, per-purpose limits and strict completion", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const limits = within(dialog).getByTestId("limits");
    await user.type(within(limits).getByLabelText("Steps per run"), "20");
    await user.type(within(limits).getByLabelText("Chat answer limit (seconds)"), "90");
    await user.click(within(limits).getByLabelText("Finish only when work items are done"));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith(
      expect.objectContaining({
        limits: expect.objectContaining({ max_steps: 20, chat_timeout_s: 90, strict: true, deadline_s: null }),
      }),
    );
  });

  it("stores a key without ever rendering it", async () => {
    const { fake, user, dialog } = await openSettings();
    const setKey = vi.spyOn(fake, "setApiKey");
    const card = within(dialog).getByTestId("provider-card");
    expect(within(card).getByTestId("key-state")).toHaveTextContent("no key stored");
    const input = within(card).getByLabelText("API key");
    expect(input).toHaveAttribute("type", "password");
    await user.type(input, SECRET);
    await user.click(within(card).getByRole("button", { name: "Store key" }));
    expect(setKey).toHaveBeenCalledWith("openrouter", SECRET);
    await waitFor(() => expect(input).toHaveValue(""));
    expect(within(card).getByTestId("key-state")).toHaveTextContent("Key stored.");
    expect(document.body.innerHTML).not.toContain(SECRET);
    expect(fake.storedKeyCount()).toBe(1);

    // Opened again: only the fact that a key is stored is shown.
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await user.click(screen.getByTestId("settings-button"));
    const again = await screen.findByTestId("settings-dialog");
    const card2 = (await within(again).findAllByTestId("provider-card"))[0] as HTMLElement;
    expect(within(card2).getByTestId("key-state")).toHaveTextContent("key stored");
    expect(within(card2).getByLabelText("API key")).toHaveValue("");
    expect(document.body.innerHTML).not.toContain(SECRET);
  });

  it("tests a connection, fills the model picker and saves the chat model", async () => {
    const { fake, user, dialog } = await openSettings();
    // With only the bundled model, the status bar says memory upkeep is paused, why and how.
    const paused = screen.getByTestId("memory-paused");
    expect(paused).toHaveTextContent("Memory upkeep paused");
    expect(paused.getAttribute("title")).toMatch(/would damage MEMORY\.md.*Configure a provider.*\[memory\] flush = true/);
    const check = vi.spyOn(fake, "checkProvider");
    const card = within(dialog).getByTestId("provider-card");
    await user.click(within(card).getByRole("button", { name: /Test connection/ }));
    expect(await within(card).findByText(/No API key/)).toBeInTheDocument();
    await user.type(within(card).getByLabelText("API key"), "typed-key");
    await user.click(within(card).getByRole("button", { name: /Test connection/ }));
    expect(check).toHaveBeenLastCalledWith(expect.objectContaining({ name: "openrouter" }), "typed-key");
    expect(await within(card).findByText(/Connected: 3 models/)).toBeInTheDocument();
    await user.selectOptions(within(card).getByLabelText("Pick a model"), "gpt-4.1");
    expect(within(card).getByLabelText("Model")).toHaveValue("gpt-4.1");
    await user.selectOptions(within(dialog).getByLabelText("Chat provider"), "openrouter");
    const save = vi.spyOn(fake, "saveSettings");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith(expect.objectContaining({ default_provider: "openrouter" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    expect(screen.getByRole("button", { name: /gpt-4\.1/ })).toBeInTheDocument();
    expect(screen.queryByText(/bundled, offline/)).toBeNull();
    expect(screen.queryByTestId("memory-paused")).toBeNull();
  });

  it("shows save errors chosen by their code", async () => {
    const { fake, user, dialog } = await openSettings();
    fake.saveSettings = () => Promise.reject(appError("invalid", "two providers have the same name"));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("Some settings are not valid: two providers have the same name");
    fake.saveSettings = () => Promise.reject(appError("busy", "anything"));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(within(dialog).getByRole("alert")).toHaveTextContent("A run is going on"));
  });

  it("says keys are kept in the system keyring when there is one", async () => {
    const { dialog } = await openSettings();
    expect(within(dialog).getByTestId("key-store")).toHaveTextContent("Keys are kept in the system keyring.");
  });

  it("says which file holds the keys when no keyring was found", async () => {
    const path = "/home/ada/.config/cairn/secrets.toml";
    const description = `No system keyring was found: keys are kept in ${path}, readable only by you`;
    const { dialog } = await openSettings({ settings: { key_store: { kind: "file", path, description } } });
    expect(within(dialog).getByTestId("key-store")).toHaveTextContent(`${description}.`);
    expect(within(dialog).queryByText(/system keyring, not in this file/)).toBeNull();
  });

  it("edits approval rules, per-purpose models and shows the bundled model path", async () => {
    const { fake, user, dialog } = await openSettings();
    expect(within(dialog).getByText(/SmolLM2-135M-Instruct-Q4_1\.gguf/)).toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Compaction"), "openrouter/gpt-4.1-mini");
    await user.selectOptions(within(dialog).getByLabelText("Policy for bash"), "deny");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    const saved = await fake.getSettings();
    expect(saved.models.compaction).toBe("openrouter/gpt-4.1-mini");
    expect(saved.approval.tools.bash).toBe("deny");
    expect(saved.models.memory_flush).toBeNull();
  });

  it("chooses what makes the vectors of search by meaning: a provider's model, off, or the bundled model", async () => {
    const { fake, user, dialog } = await openSettings();
    const field = within(dialog).getByTestId("embedder-field");
    const choice = within(field).getByLabelText("Search by meaning");
    expect(choice).toHaveValue("local");
    expect(within(field).getByTestId("embedder-hint")).toHaveTextContent(/what you meant/);

    // Through a provider: the model's name is needed, and the reason is shown when it is missing.
    await user.selectOptions(choice, "provider");
    expect(within(field).getByLabelText("Embedding provider")).toHaveValue("openrouter");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(await within(dialog).findByText(/needs the embedding model's name/)).toBeInTheDocument();
    await user.type(within(field).getByLabelText("Embedding model"), "text-embedding-3-small");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    expect((await fake.getSettings()).embedder).toBe("openrouter/text-embedding-3-small");

    // Opened again it shows the saved choice; off, then back to the bundled model.
    await user.click(screen.getByTestId("settings-button"));
    const again = await screen.findByTestId("settings-dialog");
    const field2 = within(again).getByTestId("embedder-field");
    expect(within(field2).getByLabelText("Embedding model")).toHaveValue("text-embedding-3-small");
    await user.selectOptions(within(field2).getByLabelText("Search by meaning"), "none");
    expect(within(field2).getByTestId("embedder-hint")).toHaveTextContent("Search finds the words you type.");
    expect(within(field2).queryByLabelText("Embedding model")).toBeNull();
    await user.click(within(again).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    expect((await fake.getSettings()).embedder).toBe("none");
  });

  it("says when the bundled embedding model is not installed", async () => {
    const { dialog } = await openSettings({ settings: { bundled_embedder_installed: false } });
    const field = within(dialog).getByTestId("embedder-field");
    expect(within(field).getByLabelText("Search by meaning")).toHaveTextContent("Bundled model (all-MiniLM-L6-v2), not installed");
    expect(within(field).getByTestId("embedder-hint")).toHaveTextContent(/scripts\/fetch-model\.sh/);
  });

  it("turns on private addresses for web_fetch and lists the hooks from config.toml", async () => {
    const { fake, user, dialog } = await openSettings();
    const section = within(dialog).getByTestId("web-and-hooks");
    expect(within(section).getByTestId("hooks")).toHaveTextContent("pre_tool on bash: ~/.config/cairn/hooks/no-rm.sh (up to 10 s)");
    await user.click(within(section).getByLabelText("Let web_fetch reach local and private addresses"));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    expect((await fake.getSettings()).web_allow_private).toBe(true);
  });
});

describe("local model file", () => {
  it("is chosen in the system's file dialog for a local provider", async () => {
    const { user, dialog } = await openSettings();
    const card = within(dialog).getByTestId("provider-card");
    await user.selectOptions(within(card).getByLabelText("Kind"), "local");
    await user.click(within(card).getByRole("button", { name: "Choose file…" }));
    await waitFor(() => expect(within(card).getByLabelText("Model file")).toHaveValue("/home/ada/models/qwen2.5-0.5b-instruct-q4_k_m.gguf"));
  });
});

describe("web search", () => {
  it("chooses a service, stores its key in the key store only and saves the choice", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const setKey = vi.spyOn(fake, "setApiKey");
    const field = within(dialog).getByTestId("web-search");
    const service = within(field).getByLabelText("Web search");
    expect(service).toHaveValue("");
    expect(within(field).getByTestId("web-search-hint")).toHaveTextContent("The model is offered no web search.");

    await user.selectOptions(service, "Brave Search");
    const hint = within(field).getByTestId("web-search-hint");
    expect(hint).toHaveTextContent("Each search asks you before it runs.");
    expect(hint).toHaveTextContent("What leaves this machine: the query the model writes, sent to Brave Search with your key.");
    expect(hint).toHaveTextContent("Until a key is stored");
    const input = within(field).getByLabelText("Brave Search API key");
    expect(input).toHaveAttribute("type", "password");
    await user.type(input, SECRET);
    await user.click(within(field).getByRole("button", { name: "Store key" }));
    expect(setKey).toHaveBeenCalledWith("brave", SECRET);
    expect(await within(field).findByText("Key stored.")).toBeInTheDocument();
    expect(input).toHaveValue("");
    expect(within(field).getByTestId("web-search-hint")).not.toHaveTextContent("Until a key is stored");

    // Tool approval decides whether a search asks: the hint follows it.
    await user.selectOptions(within(dialog).getByLabelText("Every tool"), "allow");
    expect(within(field).getByTestId("web-search-hint")).toHaveTextContent("Searches run without asking (Tool approval allows web_search).");

    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    const sent = save.mock.calls[0]?.[0];
    expect(sent?.web_search).toEqual({ service: "brave", searxng_url: null, stored_keys: ["brave"], env_keys: [] });
    expect(JSON.stringify(sent)).not.toContain(SECRET);
    expect(document.body.innerHTML).not.toContain(SECRET);

    // Opened again: the saved service, its key only said to be stored.
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    await user.click(screen.getByTestId("settings-button"));
    const again = within(await screen.findByTestId("settings-dialog")).getByTestId("web-search");
    expect(within(again).getByLabelText("Web search")).toHaveValue("brave");
    expect(within(again).getByTestId("key-state")).toHaveTextContent("key stored");
  });

  it("says the provider's own search runs at Anthropic without asking", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const field = within(dialog).getByTestId("web-search");
    await user.selectOptions(within(field).getByLabelText("Web search"), "provider");
    expect(within(field).queryByLabelText(/API key/)).toBeNull();
    expect(within(field).getByTestId("web-search-hint")).toHaveTextContent(/Anthropic runs the searches on its servers while it answers, without asking/);
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalledWith(expect.objectContaining({ web_search: expect.objectContaining({ service: "provider" }) })));
  });

  it("refuses a SearXNG address that is not a web address, beside the field", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const field = within(dialog).getByTestId("web-search");
    await user.selectOptions(within(field).getByLabelText("Web search"), "searxng");
    expect(within(field).queryByLabelText(/API key/)).toBeNull();
    const url = within(field).getByLabelText("SearXNG address");
    await user.type(url, "searx.lan:8888");
    expect(within(field).queryByTestId("searxng-error")).toBeNull();
    await user.tab();
    expect(within(field).getByTestId("searxng-error")).toHaveTextContent("searx.lan:8888 is not a web address: start it with http:// or https://");
    expect(url).toHaveAttribute("aria-invalid", "true");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(save).not.toHaveBeenCalled();
    expect(screen.getByTestId("settings-dialog")).toHaveTextContent("Some settings are not valid: searx.lan:8888 is not a web address");

    await user.clear(url);
    await user.type(url, "http://searx.lan:8888");
    expect(within(field).queryByTestId("searxng-error")).toBeNull();
    expect(within(field).getByTestId("web-search-hint")).toHaveTextContent("sent to your SearXNG");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0]?.[0].web_search).toEqual(expect.objectContaining({ service: "searxng", searxng_url: "http://searx.lan:8888" }));
  });
});

describe("pictures a provider sees", () => {
  it("maps Automatic / Yes / No to vision and saves the largest picture side", async () => {
    const { fake, user, dialog } = await openSettings();
    const save = vi.spyOn(fake, "saveSettings");
    const card = within(dialog).getByTestId("provider-card");
    const sees = within(card).getByLabelText("Sees pictures");
    expect(sees).toHaveValue("auto");
    const side = within(card).getByLabelText("Largest picture side");
    expect(side).toHaveAttribute("placeholder", "1568 pixels");

    await user.selectOptions(sees, "No");
    expect(within(card).queryByLabelText("Largest picture side")).toBeNull();
    expect(within(card).getByTestId("vision-hint")).toHaveTextContent("never the picture");
    await user.selectOptions(sees, "Yes");
    await user.type(within(card).getByLabelText("Largest picture side"), "1024");
    expect(within(card).getByTestId("vision-hint")).toHaveTextContent("at most 1024 pixels");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0]?.[0].providers[0]).toEqual(expect.objectContaining({ vision: true, image_max_side: 1024 }));

    // Automatic again, the side left empty: both unset.
    await waitFor(() => expect(screen.queryByTestId("settings-dialog")).toBeNull());
    await user.click(screen.getByTestId("settings-button"));
    const again = await screen.findByTestId("settings-dialog");
    const card2 = (await within(again).findAllByTestId("provider-card"))[0] as HTMLElement;
    expect(within(card2).getByLabelText("Sees pictures")).toHaveValue("yes");
    await user.selectOptions(within(card2).getByLabelText("Sees pictures"), "Automatic");
    await user.clear(within(card2).getByLabelText("Largest picture side"));
    await user.click(within(again).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalledTimes(2));
    expect(save.mock.calls[1]?.[0].providers[0]).toEqual(expect.objectContaining({ vision: null, image_max_side: null }));
  });

  it("is not asked of a local GGUF model", async () => {
    const { user, dialog } = await openSettings();
    const card = within(dialog).getByTestId("provider-card");
    await user.selectOptions(within(card).getByLabelText("Kind"), "local");
    expect(within(card).queryByLabelText("Sees pictures")).toBeNull();
  });
});
