import { useMemo } from "react";
import { lineDiff } from "../lib/diff";

function Pane({ title, text, changed }: { title: string; text: string; changed: boolean[] }) {
  const lines = text.split("\n");
  return (
    <div className="compare-pane">
      <div className="compare-title">{title}</div>
      <pre className="compare-text" aria-label={title}>
        {lines.map((line, i) => (
          <div key={i} className={changed[i] ? "compare-line changed" : "compare-line"}>
            <span className="compare-no">{i + 1}</span>
            <span>{line || " "}</span>
          </div>
        ))}
      </pre>
    </div>
  );
}

/** The file on disk beside the unsaved text, read-only, with differing lines marked. */
export function CompareView({ disk, mine }: { disk: string; mine: string }) {
  const diff = useMemo(() => lineDiff(disk, mine), [disk, mine]);
  return (
    <div className="compare" data-testid="compare-view">
      <Pane title="On disk" text={disk} changed={diff.a} />
      <Pane title="Yours (not saved)" text={mine} changed={diff.b} />
    </div>
  );
}
