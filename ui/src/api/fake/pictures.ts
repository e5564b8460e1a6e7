// The fake backend's pictures: kept by a hash of their bytes, told apart by their first
// bytes as the app does (PNG, JPEG, WebP, GIF), shown back as the data: URL they came as.
import { appError } from "../errors";
import type { Picture, WorkspacePicture } from "../types";

/** A 160 × 100 PNG of hills under a sun: what the preview's file dialog picks. */
export const SAMPLE_PNG = "iVBORw0KGgoAAAANSUhEUgAAAKAAAABkCAIAAACO1KzYAAADD0lEQVR42u3Rxa5jVxSE4XqwjNd4vUmYmZmZk2mYmZku+TJjsELjjBLJUtRKp2/b5+xtH5dL+ub736vwzAxNGJ6doQnDczM0YXh+liYML8zShOHFWZowvDRHE4aX52jC8MocTRhenacJw2vzNGF4fZ4mDG8s0IThzQWaMLy1QBOGt3u0Sv7qnXEqI2vAOz1accdMe6IRlODdHq2sAdftqx2D9xZpBQ21bl/VHry/SCulwbp99ZLwwSKtlMYD10vCh0u0Ihqv21epCh8t0YpoOXClKny8RCui5cCVqvDJMq2IlgNXqsKny7QiWg5cqQqfLdOKaDlwpSp8vkIrouXAlarwxQqtiJYDV6rClyu0IloOXKkKX63SSmm8br0kfL1KK6XxwPWS8M0qraAG61btwbdrtLKGWrd2DL5boxU34LojKMHMGq2SY6YdWQNm12nCMLdOE4b5dZowLGzQhKG3QROGxQ2aMCxt0oRheZMmDCubNGFY3aIJw9oWTRjWt2jCsLFNE4bNbRaRT8dQSr075U57Z2xts7F8Kopo0zCdBr8ttnc4rHwyamhQMm0aXBU7OxxcPhEjMFTSlGh8TOzucBD5eIzYgGHyWp4Re7s8Xj4WY3TaPGFFDoj9XZ5KPhodcUykpIKnw8EuT5aPRAf9b6qY4kfD4R7/Ix+Ozjq5Vkali+Foj//Kh2IinNisod6t8P0e/5EPxsTpl0+62ldCPhCT7od9TpZRHgd5f2j4cZ8TYcRnQd4XMn7aZ5eN5SbIe0PMzwfsmjFeA3lPSPrlgB0x3jsg7w5hPOAYdeECyLtC3q+HHLHu/B15Z0yJ3w45Al37NfKOmCq/H7KGzv4XeXtMpz+O2F73v4m8LezPIw5lgr6GvDVMGPKWMGHIm8OEIW8KE4a8MUwY8oYwYcjrw4QhrwsThrw2TBjymjBhyKvDhCGvChOGvDJMGPKKMGHIy8OEIS8LE4a8NEwY8pIwYciLw4QhLwoThrwwTBjygjBhyPPDhCHPCxOGPDdMGPKcMGHIs8OEIc8KE4Y8M0zY3+s3fVmHi+/BAAAAAElFTkSuQmCC";

function bytesOf(base64: string): Uint8Array {
  const text = atob(base64.trim());
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) out[i] = text.charCodeAt(i);
  return out;
}

function typeOf(b: Uint8Array): string | null {
  const starts = (...xs: number[]) => xs.every((x, i) => b[i] === x);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && String.fromCharCode(...b.slice(8, 12)) === "WEBP") return "image/webp";
  return null;
}

function sizeOf(b: Uint8Array, type: string): [number, number] {
  const be = (at: number) => (((b[at] ?? 0) << 24) | ((b[at + 1] ?? 0) << 16) | ((b[at + 2] ?? 0) << 8) | (b[at + 3] ?? 0)) >>> 0;
  const le16 = (at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
  if (type === "image/png") return [be(16), be(20)];
  if (type === "image/gif") return [le16(6), le16(8)];
  return [640, 480];
}

/** 64 hex digits from the bytes (FNV-1a with eight seeds): the fake's stand-in for SHA-256. */
function hashOf(b: Uint8Array): string {
  let out = "";
  for (let seed = 0; seed < 8; seed += 1) {
    let h = (0x811c9dc5 ^ seed) >>> 0;
    for (const x of b) h = Math.imul(h ^ x, 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out;
}

export class FakePictures {
  private urls = new Map<string, string>();

  /** Keeps a picture from its base64 bytes, or refuses it as the app does. */
  attach(name: string | null, data: string): Picture {
    let bytes: Uint8Array;
    try {
      bytes = bytesOf(data);
    } catch {
      throw appError("invalid", "the picture's bytes did not arrive whole");
    }
    const media_type = typeOf(bytes);
    if (!media_type) {
      const why = "its bytes are not a picture Cairn reads; pictures are taken as PNG, JPEG, WebP or GIF";
      throw appError("invalid", name ? `${name}: ${why}` : why);
    }
    const [width, height] = sizeOf(bytes, media_type);
    const sha256 = hashOf(bytes);
    this.urls.set(sha256, `data:${media_type};base64,${data.trim()}`);
    return { sha256, media_type, bytes: bytes.length, width, height, name, text: null };
  }

  thumbnail(picture: Picture): string {
    const url = this.urls.get(picture.sha256);
    if (!url) throw appError("not_found", `the picture ${picture.name ?? picture.sha256.slice(0, 12)} is no longer kept`);
    return url;
  }

  /** A workspace file that holds a picture's data: URL (the fake's files are text). */
  read(path: string, text: string): WorkspacePicture {
    const m = /^data:(image\/[a-z]+);base64,(.*)$/.exec(text.trim());
    if (!m || !m[2]) throw appError("invalid", `${path}: its bytes are not a picture Cairn reads; pictures are taken as PNG, JPEG, WebP or GIF`);
    const bytes = bytesOf(m[2]);
    const type = typeOf(bytes) ?? m[1] ?? "image/png";
    const [width, height] = sizeOf(bytes, type);
    return { path, url: text.trim(), media_type: type, width, height, bytes: bytes.length, text: null };
  }
}
