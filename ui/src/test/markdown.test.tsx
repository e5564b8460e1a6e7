import { fireEvent, render, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { AssistantMessage } from "../components/MessageView";
import { Markdown } from "../components/Markdown";
import { isSafeLink, renderMarkdown } from "../lib/markdown";
import { BackendContext } from "../lib/backendContext";
import type { Backend } from "../api/backend";

const answer = (text: string) => render(<AssistantMessage text={text} tools={[]} streaming={false} stop={null} />).container;

/** Every attribute of every element under `root`. */
const attributes = (root: Element) => [...root.querySelectorAll("*")].flatMap((el) => [...el.attributes].map((a) => `${a.name}=${a.value}`));

describe("markdown from a model is rendered safely", () => {
  it("shows raw HTML with an onerror handler as text", () => {
    const c = answer('Look: <img src=x onerror=alert(1)> and <b onclick="alert(2)">bold</b>');
    expect(c.querySelector("img")).toBeNull();
    expect(c.querySelector("b")).toBeNull();
    expect(attributes(c).some((a) => a.startsWith("onerror") || a.startsWith("onclick"))).toBe(false);
    expect(c.querySelector(".markdown")?.textContent).toContain("<img src=x onerror=alert(1)>");
  });

  it("makes no link out of javascript:, vbscript:, data: or file: URLs", () => {
    const c = answer(
      "[x](javascript:alert(1)) [y](JAVASCRIPT:alert(1)) [z](vbscript:msgbox(1)) [d](data:text/html;base64,PHNjcmlwdD4=) [f](file:///etc/passwd) <javascript:alert(3)>",
    );
    const hrefs = [...c.querySelectorAll("a")].map((a) => a.getAttribute("href") ?? "");
    expect(hrefs.filter((h) => /^(javascript|vbscript|data|file):/i.test(h.trim()))).toEqual([]);
    expect(c.querySelector("a")).toBeNull();
  });

  it("does not load images: an image becomes link text", () => {
    const c = answer("![a](https://evil/x.png) and ![b](javascript:alert(1))");
    expect(c.querySelector("img")).toBeNull();
    const link = c.querySelector("a.image-link");
    expect(link?.getAttribute("href")).toBe("https://evil/x.png");
    expect(link?.textContent).toContain("a");
    // An image with a refused URL is not parsed as one: it stays as its source text.
    expect(c.querySelectorAll("a")).toHaveLength(1);
    expect(c.textContent).toContain("![b](javascript:alert(1))");
  });

  it("keeps a script element as text", () => {
    const c = answer("<script>alert(1)</script>\n\n<script src=https://evil/x.js></script>");
    expect(c.querySelector("script")).toBeNull();
    expect(c.textContent).toContain("<script>alert(1)</script>");
  });

  it("opens http(s) and mailto links outside the app", () => {
    const c = answer("[site](https://example.com) https://example.org/page mail@example.com, and notes.md is a file");
    const links = [...c.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com", "https://example.org/page", "mailto:mail@example.com"]);
    for (const a of links) {
      expect(a.getAttribute("target")).toBe("_blank");
      expect(a.getAttribute("rel")).toBe("noopener noreferrer");
    }
  });

  it("escapes code blocks and gives each a Copy button", () => {
    const c = render(<Markdown text={'```html"><script>x</script>\n<img src=x onerror=alert(1)>\n```\n\n    <b>indented</b>'} />).container;
    expect(c.querySelector("img, script, b")).toBeNull();
    const blocks = c.querySelectorAll(".code-block");
    expect(blocks).toHaveLength(2);
    expect(blocks[0]?.querySelector("code")?.textContent).toBe("<img src=x onerror=alert(1)>\n");
    expect(c.querySelectorAll("button.copy-code")).toHaveLength(2);
  });

  it("accepts only http(s) and mailto links", () => {
    expect(isSafeLink("https://a.b")).toBe(true);
    expect(isSafeLink("mailto:a@b")).toBe(true);
    for (const bad of ["javascript:alert(1)", " javascript:x", "vbscript:x", "data:text/html,x", "file:///x", "/relative", "tauri://localhost"]) {
      expect(isSafeLink(bad)).toBe(false);
    }
    expect(renderMarkdown("[a](tauri://localhost/x)")).not.toContain("<a");
  });

  it("copies a code block with the clipboard, or the fallback without one", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const c = render(<Markdown text={"```sh\necho hi\n```"} />).container;
    const button = c.querySelector("button.copy-code") as HTMLButtonElement;
    fireEvent.click(button);
    expect(writeText).toHaveBeenCalledWith("echo hi\n");
    await waitFor(() => expect(button).toHaveTextContent("Copied"));

    Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true });
    const exec = vi.fn(() => true);
    Object.defineProperty(document, "execCommand", { value: exec, configurable: true });
    fireEvent.click(button);
    await waitFor(() => expect(exec).toHaveBeenCalledWith("copy"));
  });
});

describe("links in model text", () => {
  it("go to the shell's open_link, never navigate the window", () => {
    const openLink = vi.fn(async (_url: string) => undefined);
    const backend = { openLink } as unknown as Backend;
    const c = render(
      <BackendContext.Provider value={backend}>
        <Markdown text={"See [the docs](https://example.com/docs) please."} />
      </BackendContext.Provider>,
    ).container;
    const link = c.querySelector("a");
    expect(link).not.toBeNull();
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link!.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(openLink).toHaveBeenCalledWith("https://example.com/docs");
  });
});
