import type { AppInfo, IndexStatus, Phase } from "../api/types";
import { IndexStatusText } from "./IndexStatusText";
import { phaseLabel } from "./RunDetails";

export function StatusBar({ info, index, phase, running }: { info: AppInfo | null; index: IndexStatus | null; phase: Phase; running: boolean }) {
  return (
    <footer className="status-bar" aria-label="Status">
      <span className="status-model" title={info ? `${info.provider} · ${info.model}` : undefined}>
        {info ? `${info.model}${info.bundled_model ? " (bundled, offline)" : ""}` : "…"}
      </span>
      <span className="status-workspace" title={info?.workspace}>
        {info?.workspace ?? ""}
      </span>
      <IndexStatusText status={index} testId="index-status" />
      <span className={running ? "status-phase busy" : "status-phase"} data-testid="phase">
        {running ? phaseLabel(phase === "idle" ? "turn" : phase) : "idle"}
      </span>
    </footer>
  );
}
