import type { KeyboardEvent, PointerEvent } from "react";

/** A vertical handle that resizes the panel on its right (drag, or arrow keys). */
export function Splitter({ width, onWidth }: { width: number; onWidth(w: number): void }) {
  const clamp = (w: number) => Math.round(Math.min(Math.max(w, 280), window.innerWidth * 0.6));

  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    e.preventDefault();
    const startX = e.clientX;
    const startW = width;
    const move = (ev: globalThis.PointerEvent) => onWidth(clamp(startW + (startX - ev.clientX)));
    const up = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      document.body.classList.remove("resizing");
    };
    document.body.classList.add("resizing");
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "ArrowLeft") onWidth(clamp(width + 24));
    else if (e.key === "ArrowRight") onWidth(clamp(width - 24));
  };

  return (
    <div
      className="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the side panel"
      aria-valuenow={width}
      tabIndex={0}
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  );
}
