// The font lists name each platform's own UI and code fonts so the window looks native
// everywhere. On Linux every family the system lacks costs WebKitGTK a walk through
// fontconfig's whole fallback list (about a hundred matches), for each weight and size the
// page uses: ten absent families made the page's first frame wait on some 10,000 matches.
// There, the generic families are asked for alone: `system-ui` (the desktop's UI font,
// Cantarell on GNOME) and fontconfig's own `sans-serif` and `monospace`, which are the
// user's choice of font.

/** The platform the font lists are chosen for, from the web view's user agent. */
export function fontPlatform(userAgent: string): "linux" | "other" {
  return /\bLinux\b/.test(userAgent) && !/\bAndroid\b/.test(userAgent) ? "linux" : "other";
}

/** Marks the document's root with the platform, which the style sheet's font lists read. */
export function markFontPlatform(doc: Document, userAgent: string): void {
  doc.documentElement.dataset.fonts = fontPlatform(userAgent);
}
