import { useState, type ReactNode } from "react";
import { Icon } from "./Icon";

export type PanelTab = "editor" | "memory" | "run" | "changes";

export function RightPanel({
  tab,
  onTab,
  onCollapse,
  editorLabel,
  editor,
  memory,
  run,
  changes,
}: {
  tab: PanelTab;
  onTab(t: PanelTab): void;
  onCollapse(): void;
  editorLabel: ReactNode;
  editor: ReactNode;
  memory: ReactNode;
  run: ReactNode;
  changes: ReactNode;
}) {
  // The memory panel stays mounted once shown, so a consolidation result survives a tab change.
  const [memorySeen, setMemorySeen] = useState(false);
  if (tab === "memory" && !memorySeen) setMemorySeen(true);
  const tabs: [PanelTab, ReactNode][] = [
    ["editor", editorLabel],
    ["memory", "Memory"],
    ["run", "Run"],
    ["changes", "Changes"],
  ];
  return (
    <aside className="right-panel" aria-label="Side panel">
      <div className="tabs" role="tablist">
        {tabs.map(([id, label]) => (
          <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls={`pane-${id}`} className={tab === id ? "tab active" : "tab"} onClick={() => onTab(id)}>
            {label}
          </button>
        ))}
        <span className="spacer" />
        <button type="button" className="icon-button" aria-label="Hide side panel" title="Hide panel" onClick={onCollapse}>
          <Icon name="panel" />
        </button>
      </div>
      {/* The editor stays mounted so its text and undo history survive tab changes. */}
      <div className="pane" role="tabpanel" id="pane-editor" aria-labelledby="tab-editor" hidden={tab !== "editor"}>
        {editor}
      </div>
      {memorySeen && (
        <div className="pane" role="tabpanel" id="pane-memory" aria-labelledby="tab-memory" hidden={tab !== "memory"}>
          {memory}
        </div>
      )}
      {tab === "changes" && (
        <div className="pane" role="tabpanel" id="pane-changes" aria-labelledby="tab-changes">
          {changes}
        </div>
      )}
      {tab === "run" && (
        <div className="pane" role="tabpanel" id="pane-run" aria-labelledby="tab-run">
          {run}
        </div>
      )}
    </aside>
  );
}
