// Read-only diffs with @codemirror/merge, loaded with import() like the editor: a unified
// view of a change a tool call is about to make, and the editor's Compare (disk beside yours).
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";

export interface DiffHandle {
  destroy(): void;
}

const theme = EditorView.theme({
  "&": { color: "var(--fg)", backgroundColor: "var(--bg)", fontSize: "12.5px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-content": { padding: "4px 0" },
  ".cm-gutters": { backgroundColor: "var(--bg-soft)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  "&.cm-merge-b .cm-changedLine, .cm-inlineChangedLine": { backgroundColor: "var(--diff-add)" },
  "&.cm-merge-a .cm-changedLine, .cm-deletedChunk": { backgroundColor: "var(--diff-del)" },
  ".cm-deletedChunk .cm-deletedText, &.cm-merge-a .cm-changedText": { background: "var(--diff-del-text)" },
  "&.cm-merge-b .cm-changedText": { background: "var(--diff-add-text)" },
  ".cm-collapsedLines": { color: "var(--muted)", background: "var(--bg-soft)", fontFamily: "var(--sans)", fontSize: "12px" },
});

function dark(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

/** What every diff pane has: read-only text that takes no focus, wrapped, numbered. */
function readOnly(label: string): Extension[] {
  return [
    lineNumbers(),
    EditorView.lineWrapping,
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.darkTheme.of(dark()),
    EditorView.contentAttributes.of({ "aria-label": label }),
    theme,
  ];
}

/** `after` with the lines of `before` it drops shown above the lines it adds; long unchanged stretches fold. */
export function createChangeView(parent: HTMLElement, before: string, after: string): DiffHandle {
  const extensions = [
    ...readOnly("The file after the change"),
    unifiedMergeView({ original: before, mergeControls: false, gutter: true, collapseUnchanged: { margin: 3, minSize: 6 } }),
  ];
  const view = new EditorView({ parent, state: EditorState.create({ doc: after, extensions }) });
  return { destroy: () => view.destroy() };
}

/** The file on disk beside the unsaved text, lines aligned, changes marked. */
export function createCompareView(parent: HTMLElement, disk: string, mine: string): DiffHandle {
  const view = new MergeView({
    parent,
    a: { doc: disk, extensions: readOnly("On disk") },
    b: { doc: mine, extensions: readOnly("Yours (not saved)") },
    gutter: true,
  });
  return { destroy: () => view.destroy() };
}
