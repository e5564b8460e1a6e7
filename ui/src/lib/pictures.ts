// Pictures on the page: which files open as one, their bytes for attach_picture, and the
// copies the backend makes of kept ones (data: URLs), asked once per size and kept.
import { useEffect, useState } from "react";
import type { Backend } from "../api/backend";
import { describeError, toAppError } from "../api/errors";
import type { Picture } from "../api/types";
import { useBackend } from "./backendContext";

/** The longest side of a thumbnail's copy (twice what it shows at, for sharp screens). */
export const THUMB_SIDE = 480;
/** The longest side of the copy the full view shows. */
export const FULL_SIDE = 4096;
/** What the file input and the dialog offer. */
export const PICTURE_TYPES = "image/png,image/jpeg,image/webp,image/gif";

const PICTURE = /\.(png|jpe?g|webp|gif)$/i;

/** Whether a workspace file opens as a picture (the same types the app takes). */
export function isPicture(path: string): boolean {
  return PICTURE.test(path);
}

/** A size in bytes as a person reads it. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A picture's one-line description: its name, size in pixels and in bytes. */
export function describePicture(p: { name?: string | null; width: number; height: number; bytes: number }): string {
  return `${p.name ?? "Picture"} · ${p.width} × ${p.height} px · ${byteSize(p.bytes)}`;
}

/** A file's bytes in base64 (what attach_picture takes). */
export function base64Of(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.onload = () => {
      const url = typeof reader.result === "string" ? reader.result : "";
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.readAsDataURL(file);
  });
}

/** The copies asked for, by backend, picture and size; a failed one is asked again next time. */
const copies = new WeakMap<Backend, Map<string, Promise<string>>>();

export function pictureCopy(backend: Backend, picture: Picture, side: number): Promise<string> {
  let cache = copies.get(backend);
  if (!cache) {
    cache = new Map();
    copies.set(backend, cache);
  }
  const key = `${picture.sha256}:${side}`;
  const known = cache.get(key);
  if (known) return known;
  const asked = backend.pictureThumbnail(picture, side);
  cache.set(key, asked);
  asked.catch(() => cache.delete(key));
  return asked;
}

export type PictureCopy = { url: string | null; error: string | null };

/** A kept picture's copy of at most `side` pixels, once the backend has made it. */
export function usePictureCopy(picture: Picture, side: number): PictureCopy {
  const backend = useBackend();
  const [state, setState] = useState<PictureCopy & { key: string }>({ key: "", url: null, error: null });
  const key = `${picture.sha256}:${side}`;
  useEffect(() => {
    let live = true;
    pictureCopy(backend, picture, side)
      .then((url) => live && setState({ key, url, error: null }))
      .catch((e: unknown) => live && setState({ key, url: null, error: describeError(toAppError(e)) }));
    return () => {
      live = false;
    };
    // The picture is known by its hash: a new object for the same picture asks nothing new.
  }, [backend, key]); // eslint-disable-line react-hooks/exhaustive-deps
  return state.key === key ? state : { url: null, error: null };
}
