import { fireEvent, render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../api/types";
import { AssistantMessage } from "../components/MessageView";
import { initialRunState, runReducer, type LiveItem, type RunState } from "../state/run";

const play = (events: RunEvent[], from: RunState = initialRunState): RunState =>
  events.reduce((s, event) => runReducer(s, { type: "event", event }), from);
const assistant = (s: RunState) => s.items.find((i): i is Extract<LiveItem, { kind: "assistant" }> => i.kind === "assistant");

describe("reasoning in the chat", () => {
  it("keeps the reasoning apart from the answer while it streams and after it ends", () => {
    let s = play([
      { type: "agent_start", run_id: "r", session_id: "s" },
      { type: "message_start", role: "assistant" },
      { type: "thinking_delta", text: "Two and " },
      { type: "thinking_delta", text: "two." },
    ]);
    expect(assistant(s)).toMatchObject({ thinking: "Two and two.", text: "", streaming: true });
    s = play([{ type: "message_delta", text: "4" }], s);
    expect(assistant(s)).toMatchObject({ thinking: "Two and two.", text: "4" });
    s = play(
      [
        {
          type: "message_end",
          entry_id: "e1",
          message: {
            role: "assistant",
            stop_reason: "end_turn",
            content: [
              { type: "thinking", text: "Two and two.", signature: "sig" },
              { type: "thinking", text: "", redacted: "opaque" },
              { type: "text", text: "4" },
            ],
          },
        },
      ],
      s,
    );
    expect(assistant(s)).toMatchObject({ thinking: "Two and two.", text: "4", streaming: false, entry_id: "e1" });
  });

  it("shows reasoning open while the model thinks, folded once the answer starts, and as the user chose", () => {
    const { container, rerender, getByTestId } = render(<AssistantMessage text="" thinking="Let me see" tools={[]} streaming stop={null} />);
    const details = () => getByTestId("thinking") as HTMLDetailsElement;
    expect(details().open).toBe(true);
    expect(details().querySelector("summary")?.textContent).toBe("Thinking… · 3 words");
    expect(details().textContent).toContain("Let me see");
    // No dots besides the reasoning: it already shows the model at work.
    expect(container.querySelector(".typing")).toBeNull();

    rerender(<AssistantMessage text="The answer" thinking="Let me see it" tools={[]} streaming stop={null} />);
    expect(details().open).toBe(false);
    expect(details().querySelector("summary")?.textContent).toBe("Thinking · 4 words");
    expect(container.querySelector(".markdown")?.textContent).toContain("The answer");

    // The user opens it: it stays open after the answer ends.
    details().open = true;
    fireEvent(details(), new Event("toggle"));
    rerender(<AssistantMessage text="The answer." thinking="Let me see it" tools={[]} streaming={false} stop={null} />);
    expect(details().open).toBe(true);
    expect(details().textContent).toContain("Let me see it");
  });

  it("renders a model's reasoning as safely as its answer, and shows nothing for an answer without any", () => {
    const { getByTestId } = render(<AssistantMessage text="ok" thinking={'<img src=x onerror="alert(1)">'} tools={[]} streaming={false} stop={null} />);
    const details = getByTestId("thinking") as HTMLDetailsElement;
    details.open = true;
    fireEvent(details, new Event("toggle"));
    expect(details.querySelector("img")).toBeNull();
    expect(details.textContent).toContain("<img src=x onerror=");

    const plain = render(<AssistantMessage text="ok" tools={[]} streaming={false} stop={null} />);
    expect(plain.container.querySelector("[data-testid=thinking]")).toBeNull();
  });
});
