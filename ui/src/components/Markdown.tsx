import { memo, useMemo, type MouseEvent } from "react";
import { copyText, renderMarkdown } from "../lib/markdown";

/** Untrusted markdown, rendered through the sanitising renderer in lib/markdown. */
export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);

  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    const button = (e.target as HTMLElement).closest("button.copy-code");
    if (!(button instanceof HTMLButtonElement)) return;
    const code = button.closest(".code-block")?.querySelector("code")?.textContent ?? "";
    void copyText(code).then((ok) => {
      button.textContent = ok ? "Copied" : "Copy failed";
      window.setTimeout(() => {
        button.textContent = "Copy";
      }, 1500);
    });
  };

  return (
    <div
      className={className ? `markdown ${className}` : "markdown"}
      onClick={onClick}
      // The only innerHTML in the app: output of the sanitising markdown renderer.
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
});
