import { describe, expect, it } from "vitest";
import { fontPlatform, markFontPlatform } from "../lib/fonts";

describe("the font lists", () => {
  it("are the generic ones in WebKitGTK on Linux and the platform's own elsewhere", () => {
    const gtk = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko)";
    const mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)";
    const windows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0";
    const android = "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36";
    expect(fontPlatform(gtk)).toBe("linux");
    expect(fontPlatform(mac)).toBe("other");
    expect(fontPlatform(windows)).toBe("other");
    expect(fontPlatform(android)).toBe("other");
  });

  it("put the desktop's UI font first on Linux when the shell names one, and only a plain name", () => {
    const gtk = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15";
    const sans = () => document.documentElement.style.getPropertyValue("--sans");
    markFontPlatform(document, gtk, "Cantarell");
    expect(sans()).toBe('"Cantarell", sans-serif');
    markFontPlatform(document, gtk, undefined);
    expect(sans()).toBe("");
    for (const hostile of ['Evil"; } body { display: none', "x</style>", "", 42, "a".repeat(65)]) {
      markFontPlatform(document, gtk, hostile);
      expect(sans()).toBe("");
    }
    // Elsewhere the platform's own list stays.
    markFontPlatform(document, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)", "Cantarell");
    expect(sans()).toBe("");
  });

  it("mark the document's root, which the style sheet reads", () => {
    markFontPlatform(document, "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15");
    expect(document.documentElement.dataset.fonts).toBe("linux");
    markFontPlatform(document, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)");
    expect(document.documentElement.dataset.fonts).toBe("other");
  });
});
