import type { IndexStatus } from "../api/types";
import { counted } from "../lib/time";

export function indexStatusText(s: IndexStatus | null): string {
  if (!s) return "Index: …";
  const state = s.catching_up ? "catching up…" : "up to date";
  const embedding = s.embedding_model && s.embedded < s.to_embed && !s.embed_error
    ? ` · embedding ${s.embedded.toLocaleString("en-US")} / ${s.to_embed.toLocaleString("en-US")}`
    : "";
  return `${counted(s.files, "file", "files")} · ${counted(s.chunks, "chunk", "chunks")} · ${state}${embedding}${s.read_only ? " · read-only" : ""}`;
}

export function IndexStatusText({ status, testId }: { status: IndexStatus | null; testId?: string }) {
  return (
    <span className={status?.catching_up ? "index-status busy" : "index-status"} data-testid={testId} title={status?.read_only ? "Another Cairn process is writing the index; this window follows its changes" : undefined}>
      {indexStatusText(status)}
      {status?.last_error && <span className="index-error"> · {status.last_error}</span>}
      {status?.embed_error && <span className="index-error"> · search by meaning stopped: {status.embed_error}</span>}
      {status?.folders_unavailable.map((why) => (
        <span key={why} className="index-error" data-testid="folder-unavailable">
          {" "}
          · not searched: {why}
        </span>
      ))}
    </span>
  );
}
