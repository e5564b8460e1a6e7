// Commands reject with an AppError ({code, message}); anything else is wrapped as "internal".
import type { AppError, ErrorCode, ErrorKind } from "./types";

const CODES: readonly ErrorCode[] = [
  "busy",
  "conflict",
  "not_found",
  "invalid_path",
  "invalid",
  "provider",
  "io",
  "internal",
];

export function toAppError(e: unknown): AppError {
  if (e && typeof e === "object" && "code" in e) {
    const { code, message } = e as { code: unknown; message?: unknown };
    if (typeof code === "string" && (CODES as readonly string[]).includes(code)) {
      return { code: code as ErrorCode, message: typeof message === "string" ? message : "" };
    }
  }
  if (typeof e === "string") return { code: "internal", message: e };
  if (e instanceof Error) return { code: "internal", message: e.message };
  return { code: "internal", message: String(e) };
}

export function appError(code: ErrorCode, message: string): AppError {
  return { code, message };
}

/** A short sentence for an error, chosen by its code; the message adds the detail. */
export function describeError(e: AppError): string {
  const detail = e.message ? `: ${e.message}` : "";
  switch (e.code) {
    case "busy":
      return "Cairn is busy with a run. Stop it or wait, then try again";
    case "conflict":
      return `The file changed on disk${detail}`;
    case "not_found":
      return `Not found${detail}`;
    case "invalid_path":
      return `That path is not allowed${detail}`;
    case "invalid":
      return `Not valid${detail}`;
    case "provider":
      return `The model provider failed${detail}`;
    case "io":
      return `Could not read or write a file${detail}`;
    case "internal":
      return `Something went wrong${detail}`;
  }
}

/** The kind a run's failure has when a command that would start it failed with `code`. */
export function failureKind(code: ErrorCode): ErrorKind {
  switch (code) {
    case "busy":
    case "io":
    case "invalid":
      return code;
    case "conflict":
    case "not_found":
    case "invalid_path":
      return "invalid";
    case "provider":
    case "internal":
      return "fatal";
  }
}
