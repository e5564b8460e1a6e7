// The font lists name each platform's own UI and code fonts so the window looks native
// everywhere. On Linux every family the system lacks costs WebKitGTK a walk through
// fontconfig's whole fallback list (about a hundred matches), for each weight and size the
// page uses: ten absent families made the page's first frame wait on some 10,000 matches.
// `system-ui` costs the same walk where WebKitGTK cannot place it (a first layout some
// 17 ms longer). There, the page asks for the desktop's UI font by the name the shell reads
// from GTK's settings (installed, since the desktop draws with it), then fontconfig's own
// `sans-serif` and `monospace`, which are the user's choice of font.

declare global {
  interface Window {
    /** The desktop's UI font family, set by the shell before the page's scripts run. */
    __CAIRN_UI_FONT__?: unknown;
  }
}

/** The platform the font lists are chosen for, from the web view's user agent. */
export function fontPlatform(userAgent: string): "linux" | "other" {
  return /\bLinux\b/.test(userAgent) && !/\bAndroid\b/.test(userAgent) ? "linux" : "other";
}

/** A family name safe to quote in the style sheet (the shell checks it too). */
const FAMILY = /^[A-Za-z0-9 ._-]{1,64}$/;

/** Marks the document's root with the platform, which the style sheet's font lists read,
 * and on Linux puts the desktop's UI font (`uiFont`, as the shell named it) first. */
export function markFontPlatform(doc: Document, userAgent: string, uiFont: unknown = window.__CAIRN_UI_FONT__): void {
  const root = doc.documentElement;
  const platform = fontPlatform(userAgent);
  root.dataset.fonts = platform;
  if (platform === "linux" && typeof uiFont === "string" && FAMILY.test(uiFont.trim())) {
    root.style.setProperty("--sans", `"${uiFont.trim()}", sans-serif`);
  } else {
    root.style.removeProperty("--sans");
  }
}
