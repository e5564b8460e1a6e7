import { memo, useState } from "react";
import type { AppInfo, IndexStatus, Phase } from "../api/types";
import { useAppEvents } from "../lib/hub";
import { IndexStatusText } from "./IndexStatusText";
import { phaseLabel } from "./RunDetails";

const MB = 1024 * 1024;

/** "Downloading the bundled model: 42 / 94 MB" while the first start fetches it. */
function ModelFetch() {
  const [fetching, setFetching] = useState<{ done: number; total: number } | null>(null);
  useAppEvents((e) => {
    if (e.type === "model_fetch") setFetching(e.finished ? null : { done: e.done, total: e.total });
  });
  if (!fetching) return null;
  const done = Math.round(fetching.done / MB);
  return (
    <span className="status-fetch" data-testid="model-fetch" role="status">
      Downloading the bundled model: {fetching.total ? `${done} / ${Math.round(fetching.total / MB)} MB` : `${done} MB`}
    </span>
  );
}

/** "Loading the model: 42%" while a local model loads, instead of a silent wait. */
function ModelLoad() {
  const [progress, setProgress] = useState<number | null>(null);
  useAppEvents((e) => {
    if (e.type === "model_load") setProgress(e.progress);
  });
  if (progress === null) return null;
  return (
    <span className="status-fetch" data-testid="model-load" role="status">
      Loading the model: {Math.round(progress * 100)}%
    </span>
  );
}

export const StatusBar = memo(function StatusBar({ info, index, phase, running }: { info: AppInfo | null; index: IndexStatus | null; phase: Phase; running: boolean }) {
  return (
    <footer className="status-bar" aria-label="Status">
      <span className="status-model" title={info ? `${info.provider} · ${info.model}` : undefined}>
        {info ? `${info.model}${info.bundled_model ? " (bundled, offline)" : ""}` : "…"}
      </span>
      <span className="status-workspace" title={info?.workspace}>
        {info?.workspace ?? ""}
      </span>
      <ModelFetch />
      <ModelLoad />
      {info?.memory_paused && (
        <span className="status-paused" data-testid="memory-paused" title={info.memory_paused}>
          Memory upkeep paused
        </span>
      )}
      <IndexStatusText status={index} testId="index-status" />
      <span className={running ? "status-phase busy" : "status-phase"} data-testid="phase">
        {running ? phaseLabel(phase === "idle" ? "turn" : phase) : "idle"}
      </span>
    </footer>
  );
});
