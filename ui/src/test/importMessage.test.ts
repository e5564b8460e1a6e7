import { describe, expect, it } from "vitest";
import { importMessage } from "../lib/importMessage";

describe("importMessage", () => {
  it("says what came in, and what was there already", () => {
    expect(importMessage({ source: "ChatGPT", sessions: 3, already: 0 })).toBe("Imported 3 conversations from ChatGPT.");
    expect(importMessage({ source: "Claude", sessions: 1, already: 2 })).toBe(
      "Imported 1 conversation from Claude. 2 conversations were imported before and left as they are.",
    );
    expect(importMessage({ source: "ChatGPT", sessions: 0, already: 1 })).toBe(
      "Nothing new from ChatGPT: 1 conversation was imported before and left as it is.",
    );
  });
});
