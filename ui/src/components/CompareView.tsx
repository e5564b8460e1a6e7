import { useDiff } from "../editor/useDiff";

/** The file on disk beside the unsaved text, read-only, lines aligned and changes marked. */
export function CompareView({ disk, mine }: { disk: string; mine: string }) {
  const { host, failed } = useDiff((m, el) => m.createCompareView(el, disk, mine), [disk, mine]);
  return (
    <div className="compare" data-testid="compare-view">
      <div className="compare-titles">
        <div className="compare-title">On disk</div>
        <div className="compare-title">Yours (not saved)</div>
      </div>
      {failed ? (
        <div className="compare-failed">
          <pre className="compare-text">{disk}</pre>
          <pre className="compare-text">{mine}</pre>
        </div>
      ) : (
        <div className="compare-view" ref={host} />
      )}
    </div>
  );
}
