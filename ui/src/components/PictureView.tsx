import { useEffect, useState } from "react";
import { describeError, toAppError } from "../api/errors";
import type { WorkspacePicture } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { byteSize } from "../lib/pictures";
import { ImageOverlay } from "./Pictures";

export interface PictureRequest {
  path: string;
  nonce: number;
}

/** The short name of a picture's type (PNG, JPEG ...). */
function kindOf(mediaType: string): string {
  return mediaType.replace(/^image\//, "").toUpperCase();
}

/**
 * A picture file of the workspace in the editor's place: the picture fitted to the pane
 * (a click shows it over the window), its size in pixels and bytes, and the text read in it.
 */
export function PictureView({ request }: { request: PictureRequest }) {
  const backend = useBackend();
  const [picture, setPicture] = useState<WorkspacePicture | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    let live = true;
    setError(null);
    setOpen(false);
    if (picture?.path !== request.path) setPicture(null);
    backend
      .readPicture(request.path)
      .then((p) => live && setPicture(p))
      .catch((e: unknown) => live && setError(describeError(toAppError(e))));
    return () => {
      live = false;
    };
    // Read again for each request (a click in the tree); `picture` only decides what shows meanwhile.
  }, [backend, request]); // eslint-disable-line react-hooks/exhaustive-deps

  const name = request.path.split("/").pop() ?? request.path;
  const caption = picture ? `${name} · ${picture.width} × ${picture.height} px · ${byteSize(picture.bytes)}` : name;
  const text = picture?.text?.trim();
  return (
    <div className="file-editor picture-view" data-testid="picture-view">
      <div className="editor-bar">
        <span className="editor-path" title={request.path}>
          {request.path}
        </span>
        {picture && (
          <span className="badge" data-testid="picture-size">
            {picture.width} × {picture.height} px · {byteSize(picture.bytes)}
          </span>
        )}
        {picture && <span className="badge">{kindOf(picture.media_type)}</span>}
      </div>
      {error && (
        <div className="editor-notice error" role="alert">
          {error}
        </div>
      )}
      {!picture && !error && <div className="empty-panel muted">Reading {request.path}…</div>}
      {picture && (
        <div className="picture-pane">
          <button type="button" className="picture-canvas" aria-label={`Show ${name} over the window`} title="Show larger" onClick={() => setOpen(true)}>
            <img src={picture.url} alt={name} />
          </button>
          <section className="picture-ocr" aria-label="Text read from the picture">
            <h4>Text read from the picture</h4>
            {text ? <pre data-testid="picture-ocr">{text}</pre> : <p className="muted small">No text was found in it.</p>}
          </section>
        </div>
      )}
      {open && picture && <ImageOverlay name={name} caption={caption} url={picture.url} error={null} text={picture.text} onClose={() => setOpen(false)} />}
    </div>
  );
}
