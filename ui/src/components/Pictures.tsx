import { createContext, useContext, useState, type ReactNode } from "react";
import type { Picture } from "../api/types";
import { describePicture, FULL_SIDE, THUMB_SIDE, usePictureCopy } from "../lib/pictures";
import { Icon } from "./Icon";
import { Modal } from "./Modal";

/**
 * How large a thumbnail shows (CSS pixels): at most `width` × `height`, the whole picture
 * in its proportions; or, with `tile`, `height` high and the picture cut to fill (the
 * message box's row of small tiles).
 */
export type ThumbBox = { width: number; height: number; tile?: boolean };
export const MESSAGE_THUMB: ThumbBox = { width: 240, height: 120 };
export const COMPOSER_THUMB: ThumbBox = { width: 128, height: 56, tile: true };

/** A thumbnail's size, known before it loads, so nothing moves when it does. */
function fitted(p: Picture, box: ThumbBox): { width: number; height: number } {
  const w = Math.max(1, p.width);
  const h = Math.max(1, p.height);
  if (box.tile) return { width: Math.round(Math.min(box.width, Math.max(box.height, (box.height * w) / h))), height: box.height };
  const scale = Math.min(box.width / w, box.height / h, 1);
  return { width: Math.max(24, Math.round(w * scale)), height: Math.max(24, Math.round(h * scale)) };
}

/** A kept picture, small; a click opens it whole. */
export function PictureThumb({ picture, box, onOpen }: { picture: Picture; box: ThumbBox; onOpen(): void }) {
  const { url, error } = usePictureCopy(picture, THUMB_SIDE);
  const name = picture.name ?? "picture";
  return (
    <button
      type="button"
      className={box.tile ? "picture-thumb tile" : "picture-thumb"}
      data-testid="picture-thumb"
      data-sha={picture.sha256}
      style={fitted(picture, box)}
      title={error ?? describePicture(picture)}
      aria-label={`Open the picture ${name}`}
      onClick={onOpen}
    >
      {url ? <img src={url} alt={name} draggable={false} /> : error ? <Icon name="image" size={18} /> : <span className="spinner" aria-label="Loading" />}
    </button>
  );
}

/** Opens a picture in the full view of the nearest [`PictureViewer`]. */
const ViewerContext = createContext<((picture: Picture) => void) | null>(null);

/**
 * Holds the full view of pictures shown below it, so a picture stays open while the
 * message it came from is drawn again (a run ends and the transcript is reloaded).
 */
export function PictureViewer({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState<Picture | null>(null);
  return (
    <ViewerContext.Provider value={setOpen}>
      {children}
      {open && <PictureOverlay picture={open} onClose={() => setOpen(null)} />}
    </ViewerContext.Provider>
  );
}

/** Opens a picture whole: in the nearest viewer, else in one of the caller's own. */
export function usePictureViewer(): [(picture: Picture) => void, ReactNode] {
  const shared = useContext(ViewerContext);
  const [open, setOpen] = useState<Picture | null>(null);
  const own = !shared && open ? <PictureOverlay picture={open} onClose={() => setOpen(null)} /> : null;
  return [shared ?? setOpen, own];
}

/** A message's pictures in a row; a click opens one in the full view. */
export function PictureStrip({ pictures, box = MESSAGE_THUMB }: { pictures: Picture[]; box?: ThumbBox }) {
  const [show, overlay] = usePictureViewer();
  if (pictures.length === 0) return null;
  return (
    <>
      <div className="picture-strip" aria-label={pictures.length === 1 ? "A picture" : `${pictures.length} pictures`}>
        {pictures.map((p, i) => (
          <PictureThumb key={`${p.sha256}-${i}`} picture={p} box={box} onOpen={() => show(p)} />
        ))}
      </div>
      {overlay}
    </>
  );
}

/** A kept picture whole (at most 4096 pixels a side), with its name, sizes and the text read in it. Esc closes it. */
export function PictureOverlay({ picture, onClose }: { picture: Picture; onClose(): void }) {
  const { url, error } = usePictureCopy(picture, FULL_SIDE);
  return <ImageOverlay name={picture.name ?? "picture"} caption={describePicture(picture)} url={url} error={error} text={picture.text ?? null} onClose={onClose} />;
}

/** A picture over the window, as large as it fits: a caption above, the text read in it below. */
export function ImageOverlay({
  name,
  caption,
  url,
  error,
  text,
  onClose,
}: {
  name: string;
  caption: string;
  url: string | null;
  error: string | null;
  text: string | null;
  onClose(): void;
}) {
  const read = text?.trim();
  return (
    <Modal label={`Picture: ${name}`} className="picture-overlay" testId="picture-overlay" onClose={onClose}>
      <div className="modal-head">
        <span className="picture-caption" title={caption}>
          {caption}
        </span>
        <button type="button" className="icon-button" aria-label="Close" title="Close (Esc)" onClick={onClose}>
          <Icon name="close" />
        </button>
      </div>
      {/* Focusable, so Esc closes the picture after a click on it too. */}
      <div className="picture-stage" tabIndex={-1}>
        {url ? (
          <img src={url} alt={name} data-testid="picture-full" />
        ) : error ? (
          <p className="error-text" role="alert">
            {error}
          </p>
        ) : (
          <span className="spinner" aria-label="Loading" />
        )}
      </div>
      {read && (
        <details className="picture-text">
          <summary>Text read from the picture</summary>
          <pre>{read}</pre>
        </details>
      )}
    </Modal>
  );
}
