// Markdown from a model or a file is untrusted. It is rendered by markdown-it with raw HTML off,
// links limited to http(s) and mailto (opened outside the app), images shown as links (nothing
// remote is loaded) and code blocks escaped. Only this module's output may go to innerHTML.
import MarkdownIt from "markdown-it";

const SAFE_LINK = /^(https?:|mailto:)/i;

export function isSafeLink(url: string): boolean {
  return SAFE_LINK.test(url.trim());
}

export const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
md.validateLink = isSafeLink;
// Only links written with a scheme: "notes.md" is a file name here, not the Moldovan site.
md.linkify.set({ fuzzyLink: false });

const escape = md.utils.escapeHtml;
const LINK_ATTRS = 'target="_blank" rel="noopener noreferrer"';

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  if (!token) return "";
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  if (!token) return "";
  const src = token.attrGet("src") ?? "";
  const alt = self.renderInlineAsText(token.children ?? [], options, env).trim();
  const label = escape(alt || src || "image");
  if (!isSafeLink(src)) return `<span class="image-link">[image: ${label}]</span>`;
  return `<a class="image-link" href="${escape(src)}" ${LINK_ATTRS} title="Image (not loaded)">[image: ${label}]</a>`;
};

function codeBlock(code: string, lang: string): string {
  const l = escape(lang);
  const cls = l ? ` class="language-${l}"` : "";
  return (
    `<div class="code-block"><div class="code-head"><span class="code-lang">${l}</span>` +
    `<button type="button" class="copy-code" aria-label="Copy code">Copy</button></div>` +
    `<pre><code${cls}>${escape(code)}</code></pre></div>\n`
  );
}

md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  if (!token) return "";
  return codeBlock(token.content, token.info.trim().split(/\s+/)[0] ?? "");
};
md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx]?.content ?? "", "");
// Raw HTML is off; should it ever be switched on, it still shows as text.
md.renderer.rules.html_block = (tokens, idx) => `<p>${escape(tokens[idx]?.content ?? "")}</p>`;
md.renderer.rules.html_inline = (tokens, idx) => escape(tokens[idx]?.content ?? "");

export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** Copies text with the async clipboard, falling back to a hidden textarea. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the fallback
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
