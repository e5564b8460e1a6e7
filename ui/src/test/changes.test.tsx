import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { FakeChanges } from "../api/fake/changes";
import { FakeWorkspace } from "../api/fake/workspace";
import type { AgentChange } from "../api/types";
import { groupByRun } from "../lib/changes";
import { decide, renderApp, runFinished } from "./helpers";

const RULE = "- Answer in the language of the question.";

/** The preview backend's "edit" run, allowed: AGENTS.md gains a rule, and the change is kept. */
async function editedRules() {
  const app = await renderApp();
  await app.user.type(screen.getByTestId("composer"), "edit the rules{Enter}");
  await decide(app.user, "approval-allow-once");
  await runFinished();
  const card = () => screen.getByTestId("tool-card");
  // The card opens on a click and shows the change it made, with Revert.
  if (!within(card()).queryByTestId("revert-change")) await app.user.click(within(card()).getByRole("button", { expanded: false }));
  await waitFor(() => expect(within(card()).getByTestId("revert-change")).toBeEnabled());
  return { ...app, card };
}

describe("the agent's changes", () => {
  it("Revert on a card puts the text before back, once", async () => {
    const { fake, user, card } = await editedRules();
    expect((await fake.readFile("AGENTS.md")).text).toContain(RULE);
    await user.click(within(card()).getByTestId("revert-change"));
    await waitFor(() => expect(within(card()).getByTestId("change-state")).toHaveTextContent("Reverted"));
    expect((await fake.readFile("AGENTS.md")).text).not.toContain(RULE);
    expect(within(card()).queryByTestId("revert-change")).toBeNull();
    expect(card()).toHaveTextContent("reverted");
  });

  it("refuses with the reason when the file changed since, and keeps the user's text", async () => {
    const { fake, user, card } = await editedRules();
    const now = await fake.readFile("AGENTS.md");
    const mine = `${now.text}- My own rule.\n`;
    await fake.writeFile("AGENTS.md", mine, now.version);
    await waitFor(() => expect(within(card()).getByTestId("change-state")).toHaveTextContent("Changed since"));
    await user.click(within(card()).getByTestId("revert-change"));
    await waitFor(() => expect(within(card()).getByTestId("revert-error")).toHaveTextContent("changed since"));
    expect((await fake.readFile("AGENTS.md")).text).toBe(mine);
  });

  it("the Changes view lists the run's files with their diff, each revertible", async () => {
    const { fake, user } = await editedRules();
    await user.click(screen.getByRole("tab", { name: "Changes" }));
    const file = await screen.findByTestId("changes-file");
    expect(file).toHaveAttribute("data-path", "AGENTS.md");
    expect(file).toHaveAttribute("data-state", "applied");
    await waitFor(() => expect(within(file).getByTestId("tool-diff").querySelector(".cm-changedLine")).toHaveTextContent(RULE));
    await user.click(within(file).getByTestId("revert-change"));
    await waitFor(() => expect(screen.getByTestId("changes-file")).toHaveAttribute("data-state", "reverted"));
    expect((await fake.readFile("AGENTS.md")).text).not.toContain(RULE);
  });

  it("a session without changes says so", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByRole("tab", { name: "Changes" }));
    expect(screen.getByText(/No file changed by the agent/)).toBeInTheDocument();
  });
});

function change(id: string, run: string, path: string, before: string | null, after: string, state: AgentChange["state"]): AgentChange {
  return { id, session_id: "s", run_id: run, call_id: id, tool: "write_file", path, existed: before !== null, made_at: `2026-11-25T10:0${id}:00Z`, reverted_at: state === "reverted" ? "x" : null, before, after, state };
}

describe("grouping changes", () => {
  it("groups by run, newest first, and spans a file's changes within a run", () => {
    const runs = groupByRun([
      change("1", "r1", "a.md", "v0", "v1", "changed_since"),
      change("2", "r1", "a.md", "v1", "v2", "applied"),
      change("3", "r1", "b.md", null, "new", "applied"),
      change("4", "r2", "a.md", "v2", "v3", "reverted"),
    ]);
    expect(runs.map((r) => r.run_id)).toEqual(["r2", "r1"]);
    const [a, b] = runs[1]?.files ?? [];
    expect(a).toMatchObject({ path: "a.md", before: "v0", after: "v2", state: "applied", ids: ["1", "2"], count: 2 });
    expect(b).toMatchObject({ path: "b.md", before: null, after: "new", ids: ["3"] });
    expect(runs[0]?.files[0]).toMatchObject({ state: "reverted", ids: [], before: "v2", after: "v3" });
  });

  it("the preview backend refuses to revert past an edit made in between", () => {
    const ws = new FakeWorkspace({ "a.md": "v0" });
    const kept = new FakeChanges(ws);
    const record = (call: string, after: string) => {
      kept.record({ session_id: "s", run_id: "r", call_id: call, tool: "write_file", path: "a.md", before: ws.text("a.md"), after }, 1);
      ws.put("a.md", after);
    };
    record("c1", "v1");
    ws.put("a.md", "v1 and mine");
    record("c2", "v2");
    const ids = kept.list("s").map((c) => c.id);
    expect(() => kept.revert("s", ids, 2)).toThrow(/one at a time/);
    kept.revert("s", [ids[1] as string], 2);
    expect(ws.text("a.md")).toBe("v1 and mine");
  });
});
