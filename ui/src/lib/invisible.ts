/**
 * Text of a tool call made whole to the eye: characters that show as nothing or as a
 * blank (zero-width and format characters, bidi controls that reorder a line, the braille
 * blank, Hangul fillers, spaces other than the plain one) are shown as `\u{…}`, and
 * controls JSON would not escape as `\x..`. A person approving a call then sees every
 * character it holds: a command's tail cannot hide behind a run of blank-looking
 * characters, nor be reordered by a right-to-left override.
 */
const HIDING =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|[\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

export function showHidden(text: string): string {
  return text.replace(HIDING, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}
