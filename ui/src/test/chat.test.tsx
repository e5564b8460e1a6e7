import { act, cleanup, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { Listener } from "../api/backend";
import type { RunEvent, TranscriptItem } from "../api/types";
import { App } from "../App";
import { HISTORY_PAGE } from "../components/ChatView";
import userEvent from "@testing-library/user-event";
import { createFakeBackend } from "../api/fake";
import { loadFirstScreen } from "../lib/firstScreen";
import { restartMarks } from "../lib/startMarks";
import { decide, renderApp, runFinished } from "./helpers";

const user = () => userEvent.setup({ delay: null });

describe("chat", () => {
  it("calls ready() once after start-up and greets with the bundled model", async () => {
    const { fake } = await renderApp();
    await waitFor(() => expect(fake.readyCalls()).toBe(1));
    expect(screen.getByText(/small bundled offline model/)).toBeInTheDocument();
    expect(screen.getAllByText(/SmolLM2-135M-Instruct/).length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 30));
    expect(fake.readyCalls()).toBe(1);
  });

  it("renders the first screen from one call made before the first render", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    const first = await loadFirstScreen(fake);
    const asked = (["appInfo", "listSessions", "openSession", "attachRun"] as const).map((name) => vi.spyOn(fake, name));
    render(<App backend={fake} first={first} />);
    // Shown at the first render: the model, the open session, the index's state.
    expect(screen.getByText(/small bundled offline model/)).toBeInTheDocument();
    expect(document.querySelector(".session-heading")).toHaveTextContent("New session");
    await waitFor(() => expect(fake.readyCalls()).toBe(1));
    for (const spy of asked) expect(spy).not.toHaveBeenCalled();
    await user().type(screen.getByTestId("composer"), "hello there{Enter}");
    await runFinished();
    expect(screen.getAllByTestId("message-user").map((m) => m.textContent?.trim())).toEqual(["hello there"]);
  });

  it("starts all the same when the shell refuses the first screen", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    fake.firstScreen = () => Promise.reject(new Error("refused"));
    const first = await loadFirstScreen(fake);
    expect(first).toBeNull();
    render(<App backend={fake} first={first} />);
    await waitFor(() => expect(fake.readyCalls()).toBe(1));
    expect(screen.getByText(/small bundled offline model/)).toBeInTheDocument();
    expect(screen.getByTestId("composer")).toBeEnabled();
  });

  it("tells the shell when each start-up step came, in order", async () => {
    // With the first screen loaded before the first render, its data comes first ...
    restartMarks();
    const { fake } = await renderApp();
    await waitFor(() => expect(fake.readyCalls()).toBe(1));
    expect(fake.readyMarks()?.origin).toBeGreaterThan(0);
    const { script, booted, rendered, frame } = fake.readyMarks()?.marks ?? {};
    expect([script, booted, rendered, frame].every((t) => typeof t === "number")).toBe(true);
    expect(script!).toBeLessThanOrEqual(booted!);
    expect(booted!).toBeLessThanOrEqual(rendered!);
    expect(rendered!).toBeLessThanOrEqual(frame!);
    cleanup();
    // ... without it, after the first render.
    restartMarks();
    const again = await renderApp({ firstScreen: false });
    await waitFor(() => expect(again.fake.readyCalls()).toBe(1));
    const late = again.fake.readyMarks()?.marks ?? {};
    expect(late.rendered!).toBeLessThanOrEqual(late.booted!);
    expect(late.booted!).toBeLessThanOrEqual(late.frame!);
  });

  it("coalesces streamed deltas into the message, then shows the final text", async () => {
    const { fake, user } = await renderApp();
    let listener: Listener<RunEvent> = () => undefined;
    let finish: () => void = () => undefined;
    fake.sendMessage = (_text, l) => {
      listener = l;
      return new Promise<void>((r) => (finish = r));
    };
    await user.type(screen.getByTestId("composer"), "hi{Enter}");
    expect(screen.getByTestId("message-user")).toHaveTextContent("hi");
    expect(screen.getByTestId("send-button")).toHaveTextContent("Steer");
    act(() => {
      listener({ type: "agent_start", run_id: "r", session_id: "s-new" });
      listener({ type: "message_start", role: "assistant" });
      listener({ type: "message_delta", text: "Hel" });
      listener({ type: "message_delta", text: "lo **wor" });
      listener({ type: "message_delta", text: "ld**" });
    });
    const msgs = screen.getAllByTestId("message-assistant");
    expect(msgs).toHaveLength(1);
    expect(msgs[0]?.querySelector(".markdown")?.textContent?.trim()).toBe("Hello world");
    expect(msgs[0]?.querySelector(".markdown strong")?.textContent).toBe("world");
    act(() => listener({ type: "message_end", entry_id: "e2", message: { role: "assistant", content: [{ type: "text", text: "Hello, world!" }], stop_reason: "end_turn" } }));
    expect(screen.getByTestId("message-assistant").querySelector(".markdown")?.textContent?.trim()).toBe("Hello, world!");
    act(() => finish());
  });

  it("streams an answer from the fake backend and reloads the session after the run", async () => {
    const { fake, user } = await renderApp();
    const open = vi.spyOn(fake, "openSession");
    await user.type(screen.getByTestId("composer"), "Tell me about the garden{Enter}");
    await runFinished();
    await waitFor(() => expect(screen.getByTestId("message-assistant").querySelector(".markdown")).toHaveTextContent(/preview backend/));
    expect(open).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId("message-user")).toHaveTextContent("Tell me about the garden");
    await waitFor(() => expect(screen.getAllByTestId("session-item")[0]).toHaveTextContent("Tell me about the garden"));
  });

  it("shows a tool call waiting for approval and sends the chosen decision", async () => {
    const { fake, user } = await renderApp();
    const resolve = vi.spyOn(fake, "resolveApproval");
    await user.type(screen.getByTestId("composer"), "use a tool please{Enter}");
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(card).toHaveAttribute("data-status", "approval"));
    expect(card).toHaveAttribute("data-tool", "bash");
    expect(within(card).getAllByText(/ls memory knowledge/).length).toBeGreaterThan(0);
    expect(screen.getByTestId("approval-allow-always")).toHaveTextContent("Always allow: bash commands starting with ls");
    await decide(user, "approval-allow-once");
    expect(resolve).toHaveBeenCalledWith(expect.stringMatching(/^req-/), "allow_once");
    await runFinished();
    await waitFor(() => expect(screen.getByTestId("tool-card")).toHaveAttribute("data-status", "done"));
  });

  it("sends allow_always and deny from the card's buttons", async () => {
    const { fake, user } = await renderApp();
    const resolve = vi.spyOn(fake, "resolveApproval");
    await user.type(screen.getByTestId("composer"), "tool{Enter}");
    await decide(user, "approval-deny");
    expect(resolve).toHaveBeenLastCalledWith(expect.any(String), "deny");
    expect(screen.getByTestId("tool-card")).toHaveAttribute("data-status", "denied");
    await runFinished();
    await user.type(screen.getByTestId("composer"), "tool again{Enter}");
    await waitFor(() => expect(screen.getAllByTestId("tool-card")[1]).toHaveAttribute("data-status", "approval"));
    await decide(user, "approval-allow-always");
    expect(resolve).toHaveBeenLastCalledWith(expect.any(String), "allow_always");
    await runFinished();
  });

  it("stops the run on Esc", async () => {
    const { fake, user } = await renderApp();
    const abort = vi.spyOn(fake, "abort");
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    expect(screen.getByTestId("stop-button")).toBeInTheDocument();
    await user.keyboard("{Escape}");
    expect(abort).toHaveBeenCalledTimes(1);
    await runFinished();
    expect(screen.getByText("Stopped.")).toBeInTheDocument();
  });

  it("stops the run with the Stop button", async () => {
    const { fake, user } = await renderApp();
    const abort = vi.spyOn(fake, "abort");
    await user.type(screen.getByTestId("composer"), "tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.click(screen.getByTestId("stop-button"));
    expect(abort).toHaveBeenCalled();
    await runFinished();
  });

  it("steers a running run with what is typed", async () => {
    const { fake, user } = await renderApp();
    const steer = vi.spyOn(fake, "steer");
    const send = vi.spyOn(fake, "sendMessage");
    await user.type(screen.getByTestId("composer"), "tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.click(screen.getByTestId("composer"));
    await user.type(screen.getByTestId("composer"), "keep it short{Enter}");
    expect(steer).toHaveBeenCalledWith("keep it short");
    expect(send).toHaveBeenCalledTimes(1);
    await decide(user, "approval-allow-once");
    await runFinished();
    await waitFor(() => expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(expect.arrayContaining([expect.stringContaining("keep it short")])));
  });

  it("edits a message into a new branch and switches between branches", async () => {
    const { fake, user } = await renderApp();
    const edit = vi.spyOn(fake, "editMessage");
    const switchBranch = vi.spyOn(fake, "switchBranch");
    await user.type(screen.getByTestId("composer"), "first question{Enter}");
    await runFinished();
    const firstId = screen.getByTestId("message-user").getAttribute("data-entry");
    await user.click(screen.getByTestId("edit-message"));
    const box = screen.getByRole("textbox", { name: "Edit message" });
    await user.clear(box);
    await user.type(box, "second question{Enter}");
    expect(edit).toHaveBeenCalledWith(firstId, "second question", expect.any(Function));
    await runFinished();
    await waitFor(() => expect(screen.getByTestId("message-user")).toHaveTextContent("second question"));
    expect(screen.getByText("2/2")).toBeInTheDocument();
    expect(screen.getByText(/2 branches/)).toBeInTheDocument();
    await user.click(screen.getByTestId("branch-prev"));
    expect(switchBranch).toHaveBeenCalledWith(firstId, false);
    await waitFor(() => expect(screen.getByTestId("message-user")).toHaveTextContent("first question"));
    expect(screen.getByText("1/2")).toBeInTheDocument();
    expect(screen.queryByText("Summary of the branch left behind")).toBeNull();
    // Asked for: the version left is summarised where the conversation goes on.
    await user.click(screen.getByTestId("branch-summary"));
    expect(screen.getByTestId("branch-summary")).toHaveAttribute("aria-pressed", "true");
    await user.click(screen.getByTestId("branch-next"));
    expect(switchBranch).toHaveBeenLastCalledWith(expect.any(String), true);
    await waitFor(() => expect(screen.getByTestId("message-user")).toHaveTextContent("second question"));
    expect(await screen.findByText("Summary of the branch left behind")).toBeInTheDocument();
  });

  it("retries a message on a new branch", async () => {
    const { fake, user } = await renderApp();
    const retry = vi.spyOn(fake, "retry");
    await user.type(screen.getByTestId("composer"), "once more{Enter}");
    await runFinished();
    const id = screen.getByTestId("message-user").getAttribute("data-entry");
    await user.click(screen.getByTestId("retry-message"));
    expect(retry).toHaveBeenCalledWith(id, expect.any(Function));
    await runFinished();
    await waitFor(() => expect(screen.getByText("2/2")).toBeInTheDocument());
  });

  it("shows a failed run's error with a Retry action", async () => {
    const { fake, user } = await renderApp();
    const retry = vi.spyOn(fake, "retry");
    await user.type(screen.getByTestId("composer"), "this will fail{Enter}");
    await runFinished();
    const alert = await screen.findByText(/503 Service Unavailable/, { selector: ".outcome span" });
    expect(alert).toBeInTheDocument();
    const outcome = alert.closest(".outcome") as HTMLElement;
    await user.click(within(outcome).getByRole("button", { name: "Retry" }));
    expect(retry).toHaveBeenCalled();
    await runFinished();
  });

  it("notes a memory flush inline", async () => {
    const { user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "remember that I like tea{Enter}");
    await runFinished();
    expect(await screen.findByText(/Saved 1 note to/)).toBeInTheDocument();
  });

  it("sends on Enter but not on Shift+Enter", async () => {
    const { fake, user } = await renderApp();
    const send = vi.spyOn(fake, "sendMessage");
    const box = screen.getByTestId("composer");
    await user.type(box, "line one{Shift>}{Enter}{/Shift}line two");
    expect(send).not.toHaveBeenCalled();
    expect(box).toHaveValue("line one\nline two");
    await user.keyboard("{Enter}");
    expect(send).toHaveBeenCalledWith("line one\nline two", expect.any(Function));
    await runFinished();
  });

  it("marks a compaction with a divider", async () => {
    const { user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "compact please{Enter}");
    await runFinished();
    expect(await screen.findByText(/Earlier messages were summarised/)).toBeInTheDocument();
  });

  it("opens a long session at its latest messages and brings in earlier ones on demand", async () => {
    const { fake, user } = await renderApp();
    const items: TranscriptItem[] = [];
    for (let i = 0; i < 100; i++) {
      items.push({ kind: "user", entry_id: `u${i}`, text: `question ${i}`, pictures: [], siblings: null });
      items.push({ kind: "assistant", entry_id: `a${i}`, text: `answer ${i}`, tool_calls: [], stop: "end_turn" });
    }
    await user.type(screen.getByTestId("composer"), "hi{Enter}");
    await runFinished();
    fake.openSession = async () => ({ id: "long", title: "Long", items, leaf: "a99", branches: 1, running: false, last_run: null, thinking: null, interrupted: null });
    await user.click(screen.getByTestId("new-session"));
    await waitFor(() => expect(screen.getAllByTestId("message-user")).toHaveLength(HISTORY_PAGE / 2));
    const shown = () => screen.getAllByTestId("message-user").map((m) => m.textContent ?? "");
    expect(shown()[0]).toContain(`question ${100 - HISTORY_PAGE / 2}`);
    expect(shown()[HISTORY_PAGE / 2 - 1]).toContain("question 99");
    const answers = screen.getAllByTestId("message-assistant");
    expect(answers[answers.length - 1]).toHaveTextContent("answer 99");
    const more = screen.getByTestId("show-earlier");
    expect(more).toHaveTextContent(`(${200 - HISTORY_PAGE} more)`);
    await user.click(more);
    expect(screen.getAllByTestId("message-user")).toHaveLength(HISTORY_PAGE);
    for (let shownRows = 2 * HISTORY_PAGE; shownRows < 200; shownRows += HISTORY_PAGE) await user.click(screen.getByTestId("show-earlier"));
    expect(screen.getAllByTestId("message-user")).toHaveLength(100);
    expect(shown()[0]).toContain("question 0");
    expect(screen.queryByTestId("show-earlier")).toBeNull();
  });

  it("says under the last message how a reopened session's last run ended", async () => {
    const { fake, user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hi{Enter}");
    await runFinished();
    const items: TranscriptItem[] = [{ kind: "user", entry_id: "u1", text: "tidy the notes", pictures: [], siblings: null }];
    const failed = { kind: "failed" as const, error: { code: "transient" as const, message: "the server closed the connection" } };
    fake.openSession = async () => ({
      id: "old",
      title: "Old",
      items,
      leaf: "u1",
      branches: 1,
      running: false,
      last_run: { outcome: failed, steps: 7, duration_ms: 4200, said: "failed after 7 steps: the server closed the connection" },
      thinking: null,
      interrupted: null,
    });
    await user.click(screen.getByTestId("new-session"));
    const line = await screen.findByTestId("last-run");
    expect(line).toHaveTextContent("Failed after 7 steps: the server closed the connection.");
    expect(line).toHaveClass("failed");
  });

  it("offers to resume a run that was cut short, and goes on with it", async () => {
    const { fake, user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hi{Enter}");
    await runFinished();
    const items: TranscriptItem[] = [{ kind: "user", entry_id: "u1", text: "tidy the notes", pictures: [], siblings: null }];
    const base = { id: "cut", title: "Cut", items, leaf: "u1", branches: 1, running: false, last_run: null, thinking: null };
    let resumed = false;
    fake.openSession = async () => ({ ...base, interrupted: resumed ? null : { message: "tidy the notes", steps: 3, queued: ["and count them"] } });
    fake.resumeRun = async (listener) => {
      resumed = true;
      listener({ type: "agent_start", run_id: "r2", session_id: "cut" });
      listener({ type: "agent_end", outcome: { kind: "completed" }, summary: { steps: 5, tool_calls: 2, input_tokens: 1, output_tokens: 1, duration_ms: 10 }, session_id: "cut" });
    };
    await user.click(screen.getByTestId("new-session"));
    const bar = await screen.findByTestId("resume-bar");
    expect(bar).toHaveTextContent("The last run was cut short after 3 model calls, with 1 follow-up waiting.");
    await user.click(within(bar).getByRole("button", { name: "Resume the interrupted run" }));
    await waitFor(() => expect(screen.queryByTestId("resume-bar")).toBeNull());
    expect(resumed).toBe(true);
  });

  it("a page loaded again while a run waits for approval shows the run where it is", async () => {
    const { fake, user, unmount } = await renderApp();
    await user.type(screen.getByTestId("composer"), "earlier question{Enter}");
    await runFinished();
    await user.type(screen.getByTestId("composer"), "use a tool please{Enter}");
    await screen.findByTestId("approval-allow-once");
    // The page goes away; the run goes on in the backend, waiting for the user.
    unmount();
    const open = vi.spyOn(fake, "openSession");
    // As main.tsx starts the page: the first screen has no session while the run goes on.
    const first = await loadFirstScreen(fake);
    expect(first).not.toBeNull();
    expect(first?.session).toBeNull();
    render(<App backend={fake} first={first} />);
    await waitFor(() => expect(screen.getByTestId("tool-card")).toHaveAttribute("data-status", "approval"));
    expect(open).not.toHaveBeenCalled();
    expect(screen.getByTestId("stop-button")).toBeInTheDocument();
    const users = () => screen.getAllByTestId("message-user").map((m) => m.textContent?.trim());
    expect(users()).toEqual(["earlier question", "use a tool please"]);
    await decide(user, "approval-allow-once");
    await runFinished();
    await waitFor(() => expect(screen.getByTestId("tool-card")).toHaveAttribute("data-status", "done"));
    expect(users()).toEqual(["earlier question", "use a tool please"]);
    // The earlier answer, the one that called the tool and the one after it: none twice.
    expect(screen.getAllByTestId("message-assistant")).toHaveLength(3);
  });
});

describe("follow-ups queued while a run works", () => {
  it("are kept by the core and sent where the run would end, the run going on", async () => {
    const { fake, user } = await renderApp();
    const send = vi.spyOn(fake, "sendMessage");
    const followUp = vi.spyOn(fake, "followUp");
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.type(screen.getByTestId("composer"), "then sum it up");
    await user.click(screen.getByTestId("queue-button"));
    expect(followUp).toHaveBeenCalledWith("then sum it up");
    const queued = await screen.findByTestId("queued");
    expect(queued).toHaveTextContent("Next");
    expect(queued).toHaveTextContent("then sum it up");
    expect(screen.getByTestId("composer")).toHaveValue("");
    await decide(user, "approval-allow-once");
    await runFinished();
    expect(send).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId("queued")).toBeNull();
    await waitFor(() => expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(["run a tool", "then sum it up"]));
  });

  it("come back to the message box when the run is stopped, so nothing typed is lost", async () => {
    const { fake, user } = await renderApp();
    const send = vi.spyOn(fake, "sendMessage");
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.type(screen.getByTestId("composer"), "later{Alt>}{Enter}{/Alt}");
    await user.type(screen.getByTestId("composer"), "much later");
    await user.click(screen.getByTestId("queue-button"));
    await screen.findByText("much later");
    await user.keyboard("{Escape}");
    await runFinished();
    expect(screen.queryByTestId("queued")).toBeNull();
    await waitFor(() => expect(screen.getByTestId("composer")).toHaveValue("later\n\nmuch later"));
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("survive a reload of the page and are still sent by the core", async () => {
    const { fake, user, unmount } = await renderApp();
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.type(screen.getByTestId("composer"), "then sum it up{Alt>}{Enter}{/Alt}");
    await screen.findByTestId("queued");
    unmount();
    render(<App backend={fake} />);
    const queued = await screen.findByTestId("queued");
    expect(queued).toHaveTextContent("then sum it up");
    await decide(user, "approval-allow-once");
    await runFinished();
    await waitFor(() => expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(["run a tool", "then sum it up"]));
    expect(screen.queryByTestId("queued")).toBeNull();
  });

  it("are delivered one at a time when the queue's menu says so, and the choice is saved", async () => {
    const { fake, user } = await renderApp();
    const setMode = vi.spyOn(fake, "setFollowUpMode");
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.type(screen.getByTestId("composer"), "first{Alt>}{Enter}{/Alt}");
    await user.type(screen.getByTestId("composer"), "second{Alt>}{Enter}{/Alt}");
    const menu = await screen.findByTestId("queue-mode");
    expect(menu).toHaveValue("all");
    await user.selectOptions(menu, "one-at-a-time");
    expect(setMode).toHaveBeenCalledWith("one-at-a-time");
    expect((await fake.appInfo()).follow_up_mode).toBe("one-at-a-time");
    await decide(user, "approval-allow-once");
    await runFinished();
    await waitFor(() => expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(["run a tool", "first", "second"]));
  });

  it("can be dropped before they are sent", async () => {
    const { user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "run a tool{Enter}");
    await screen.findByTestId("approval-allow-once");
    await user.type(screen.getByTestId("composer"), "never mind{Alt>}{Enter}{/Alt}");
    await user.type(screen.getByTestId("composer"), "and summarise{Alt>}{Enter}{/Alt}");
    const queued = await screen.findByTestId("queued");
    await waitFor(() => expect(queued).toHaveTextContent("and summarise"));
    await user.click(within(queued).getByRole("button", { name: "Drop the follow-up: never mind" }));
    await waitFor(() => expect(screen.getByTestId("queued")).not.toHaveTextContent("never mind"));
    await decide(user, "approval-allow-once");
    await runFinished();
    await waitFor(() => expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(["run a tool", "and summarise"]));
  });
});

describe("context meter", () => {
  it("shows the tokens used of the window after a run and compacts with a focus", async () => {
    const { fake, user } = await renderApp();
    expect(screen.queryByTestId("context-meter")).toBeNull();
    await user.type(screen.getByTestId("composer"), "about tomatoes{Enter}");
    await runFinished();
    const meter = await screen.findByTestId("context-meter");
    expect(meter).toHaveTextContent("3.4k / 8.2k");
    const compact = vi.spyOn(fake, "compactNow");
    await user.click(meter);
    await user.type(screen.getByLabelText("Focus of the summary (optional)"), "the watering");
    await user.click(screen.getByRole("button", { name: "Compact now" }));
    expect(compact).toHaveBeenCalledWith("the watering");
    expect(await screen.findByText(/with a focus on the watering/)).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId("context-meter")).toHaveTextContent("600 / 8.2k"));
  });

  it("says compacting while a summary is written in the background", async () => {
    const { fake, user } = await renderApp();
    const real = fake.contextUsage.bind(fake);
    fake.contextUsage = async () => {
      const usage = await real();
      return usage && { ...usage, compacting: true };
    };
    await user.type(screen.getByTestId("composer"), "about tomatoes{Enter}");
    await runFinished();
    const meter = await screen.findByTestId("context-meter");
    expect(within(meter).getByTestId("meter-compacting")).toHaveTextContent("compacting…");
    expect(meter).toHaveAttribute("title", expect.stringContaining("counted by an estimate"));
  });

  it("says why when there is nothing to compact", async () => {
    const { fake, user } = await renderApp();
    await user.type(screen.getByTestId("composer"), "hello{Enter}");
    await runFinished();
    fake.compactNow = () => Promise.reject(new Error("cannot compact: there is nothing before the recent messages to summarise"));
    await user.click(await screen.findByTestId("context-meter"));
    await user.click(screen.getByRole("button", { name: "Compact now" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("nothing before the recent messages");
  });
});

describe("the composer's / menu", () => {
  it("offers prompt templates and skills as a name is typed, and picks one with the keyboard", async () => {
    const { fake, user } = await renderApp();
    const list = vi.spyOn(fake, "slashCommands");
    const box = screen.getByTestId("composer");
    await user.type(box, "/");
    const menu = await screen.findByTestId("slash-menu");
    expect(within(menu).getAllByTestId("slash-option").map((o) => o.textContent)).toEqual([
      "/review <file> <focus> prompt Review a file for one thing",
      "/summarize skill Summarize a long document into bullets.",
    ]);
    await user.type(box, "s");
    expect(within(screen.getByTestId("slash-menu")).getAllByTestId("slash-option")).toHaveLength(1);
    await user.keyboard("{Enter}");
    expect(box).toHaveValue("/summarize ");
    expect(screen.queryByTestId("slash-menu")).toBeNull();
    // Esc closes the menu without touching the text; a message without a slash shows none.
    await user.clear(box);
    await user.type(box, "/re");
    await screen.findByTestId("slash-menu");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("slash-menu")).toBeNull();
    expect(box).toHaveValue("/re");
    expect(list).toHaveBeenCalledTimes(1);
  });
});
