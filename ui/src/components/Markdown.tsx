import { memo, useContext, useMemo, type MouseEvent } from "react";
import { copyText, renderMarkdown } from "../lib/markdown";
import { BackendContext } from "../lib/backendContext";

/** Untrusted markdown, rendered through the sanitising renderer in lib/markdown. */
export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  const backend = useContext(BackendContext);

  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    const link = (e.target as HTMLElement).closest("a[href]");
    if (link instanceof HTMLAnchorElement) {
      // The window never navigates: the shell opens http(s)/mailto links in the browser
      // and refuses anything else.
      e.preventDefault();
      void backend?.openLink(link.href).catch(() => undefined);
      return;
    }
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
