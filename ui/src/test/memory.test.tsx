import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { editorView, renderApp, runFinished } from "./helpers";

describe("memory and run panels", () => {
  it("shows today's log, consolidates on demand and opens the backup", async () => {
    const { fake, user } = await renderApp();
    await user.click(screen.getByRole("tab", { name: "Memory" }));
    const panel = await screen.findByTestId("memory-panel");
    await within(panel).findByText(/settled on every other day/);
    expect(within(panel).getByText(/Last run:/)).toHaveTextContent(/5 hours ago/);
    const real = fake.consolidateNow;
    let release: () => void = () => undefined;
    const consolidate = vi.fn(() => new Promise<Awaited<ReturnType<typeof real>>>((resolve) => (release = () => resolve(real()))));
    fake.consolidateNow = consolidate;
    await user.click(within(panel).getByTestId("consolidate-now"));
    expect(consolidate).toHaveBeenCalledTimes(1);
    expect(within(panel).getByTestId("consolidate-now")).toBeDisabled();
    expect(within(panel).getByTestId("consolidate-now")).toHaveTextContent("Consolidating…");
    release();
    const result = await within(panel).findByText("MEMORY.md updated");
    const box = result.closest(".consolidation-result") as HTMLElement;
    expect(box).toHaveTextContent("+1");
    expect(box).toHaveTextContent("−0");
    await user.click(within(box).getByRole("button", { name: /memory\/archive\/MEMORY-/ }));
    const view = await editorView();
    await waitFor(() => expect(view.state.doc.toString()).toContain("# Memory"));
  });

  it("says what a consolidation that changed nothing means", async () => {
    const { fake, user } = await renderApp();
    await user.click(screen.getByRole("tab", { name: "Memory" }));
    const panel = await screen.findByTestId("memory-panel");
    fake.consolidateNow = async () => ({ status: "unchanged", message: "", added: 0, removed: 0, backup: null });
    await user.click(within(panel).getByTestId("consolidate-now"));
    const result = await within(panel).findByText("MEMORY.md already held everything new");
    expect(result.closest(".consolidation-result")).not.toBeNull();
  });

  it("lists memory flushes and follows today's log", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByRole("tab", { name: "Memory" }));
    const panel = await screen.findByTestId("memory-panel");
    await user.type(screen.getByTestId("composer"), "remember the hose is broken{Enter}");
    await runFinished();
    await within(panel).findByText(/Saved 1 note to/);
    await within(panel).findByText(/remember the hose is broken/);
  });

  it("shows the last run's context, steps, tokens and duration", async () => {
    const { user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hello{Enter}");
    await runFinished();
    await user.click(screen.getByRole("tab", { name: "Run" }));
    const details = await screen.findByTestId("run-details");
    expect(details).toHaveTextContent("completed");
    expect(details).toHaveTextContent("MEMORY.md");
    expect(details).toHaveTextContent("knowledge/garden.md#L3-L5");
    expect(details).toHaveTextContent(/Tokens\s*[\d,]+ in · [\d,]+ out/);
  });
});
