import { describe, expect, it } from "vitest";
import { createFakeBackend } from "../api/fake";
import type { RunEvent } from "../api/types";

describe("fake backend", () => {
  it("versions files and refuses a write against an old version", async () => {
    const fake = createFakeBackend({ delayMs: 0, files: { "a.md": "one" } });
    const read = await fake.readFile("a.md");
    const saved = await fake.writeFile("a.md", "two", read.version);
    expect(saved.version).not.toBe(read.version);
    await expect(fake.writeFile("a.md", "three", read.version)).rejects.toMatchObject({ code: "conflict" });
    await fake.writeFile("a.md", "three", null);
    expect((await fake.readFile("a.md")).text).toBe("three");
    await expect(fake.readFile("nope.md")).rejects.toMatchObject({ code: "not_found" });
    await expect(fake.writeFile(".cairn/x", "", null)).rejects.toMatchObject({ code: "invalid_path" });
  });

  it("streams a run ending with agent_end and keeps branches", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    await fake.openSession(null);
    const events: RunEvent[] = [];
    await fake.sendMessage("hello there", (e) => events.push(e));
    expect(events[0]?.type).toBe("agent_start");
    expect(events[events.length - 1]?.type).toBe("agent_end");
    expect(events.filter((e) => e.type === "message_delta").length).toBeGreaterThan(3);
    const view = await fake.openSession((await fake.listSessions())[0]?.id ?? null);
    const user = view.items[0];
    if (user?.kind !== "user") throw new Error("no user message");
    await fake.editMessage(user.entry_id, "hello again", () => undefined);
    const after = await fake.openSession(view.id);
    expect(after.branches).toBe(2);
    const edited = after.items[0];
    expect(edited?.kind === "user" && edited.siblings).toEqual({ ids: [user.entry_id, expect.any(String)], index: 1 });
    const back = await fake.switchBranch(user.entry_id);
    expect(back.items[0]).toMatchObject({ text: "hello there" });
    expect(back.items).toHaveLength(2);
  });

  it("cuts search snippets into marked parts", async () => {
    const fake = createFakeBackend({ delayMs: 0, files: { "n.md": "# Title\n\nThe Garden and the garden hose\n" } });
    const { hits } = await fake.memorySearch("garden", 5);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ path: "n.md", heading: "Title", start_line: 1 });
    expect(hits[0]?.parts.filter((p) => p.hit).map((p) => p.text)).toEqual(["Garden", "garden"]);
  });

  it("never hands out a stored key", async () => {
    const fake = createFakeBackend({ delayMs: 0 });
    await fake.setApiKey("openrouter", "secret-value");
    const settings = await fake.getSettings();
    expect(JSON.stringify(settings)).not.toContain("secret-value");
    expect(settings.providers[0]?.has_key).toBe(true);
  });
});
