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

  it("shows what the index reaches and what it leaves out, with why", async () => {
    const { fake, user } = await renderApp();
    fake.indexCoverage = async () => ({
      indexed: 12,
      skipped: 2,
      failed: 1,
      pending: 0,
      chunks: 40,
      embedded: 38,
      left_out: [
        { path: "papers/broken.pdf", status: "failed", folder: false, reason: "the PDF cannot be read: invalid file header" },
        { path: "build", status: "skipped", folder: true, reason: "ignored by .gitignore (`build/`)" },
        { path: "photo.bmp", status: "skipped", folder: false, reason: "unsupported type (.bmp)" },
      ],
      ocr: [
        { path: "knowledge/receipt.png", pages: 1, unread: null },
        { path: "scans/contract.pdf", pages: 12, unread: "3 scanned pages not read: OCR ran out of the time one file may take" },
      ],
      unread_scans: ["2 scanned pages not read: install tesseract-ocr"],
    });
    await user.click(screen.getByRole("tab", { name: "Memory" }));
    const coverage = await screen.findByTestId("coverage");
    await within(coverage).findByText(/12 files indexed/);
    expect(within(coverage).getByTestId("coverage-counts")).toHaveTextContent("12 files indexed (40 chunks, 38 with vectors) · 2 skipped · 1 failed");
    expect(coverage).toHaveTextContent("papers/broken.pdf failed: the PDF cannot be read: invalid file header");
    expect(coverage).toHaveTextContent("build/ skipped: ignored by .gitignore (`build/`)");
    expect(within(coverage).queryByRole("button", { name: "build" })).toBeNull();
    const ocr = within(coverage).getByTestId("coverage-ocr");
    expect(ocr).toHaveTextContent("knowledge/receipt.png indexed (OCR)");
    expect(ocr).not.toHaveTextContent("knowledge/receipt.png indexed (OCR), 1 page");
    expect(ocr).toHaveTextContent("scans/contract.pdf indexed (OCR), 12 pages read that way; 3 scanned pages not read");
    expect(within(coverage).getByTestId("coverage-unread-scans")).toHaveTextContent("2 scanned pages not read: install tesseract-ocr");
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
