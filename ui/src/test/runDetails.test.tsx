// The run panel's work list: each item's status, priority and the file it makes.
import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { RunDetails } from "../components/RunDetails";
import { initialRunState, runReducer } from "../state/run";

describe("the run panel's work items", () => {
  it("show their priority and the file each makes", () => {
    let s = runReducer(initialRunState, { type: "begin", sessionId: "s1", text: "draft", cutAt: null, now: 1 });
    const items = [
      { id: "1", text: "draft the notes", status: "done" as const, priority: "high" as const, artifact: "notes/draft.md" },
      { id: "2", text: "tidy up", status: "in_progress" as const, priority: "low" as const },
    ];
    s = runReducer(s, { type: "event", event: { type: "work_items", items } });
    render(<RunDetails run={s} />);
    const list = screen.getByTestId("work-items");
    const rows = within(list).getAllByRole("listitem");
    expect(rows[0]).toHaveTextContent("draft the notes");
    expect(rows[0]).toHaveTextContent("high");
    expect(within(rows[0] as HTMLElement).getByTestId("work-artifact")).toHaveTextContent("makes notes/draft.md");
    expect(rows[1]).toHaveTextContent("tidy uplow in progress");
    expect(within(rows[1] as HTMLElement).queryByTestId("work-artifact")).toBeNull();
  });
});
