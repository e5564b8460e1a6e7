// The CodeMirror 6 editor, loaded with import() when the first file is opened so start-up
// stays small. Markdown highlighting without the embedded HTML language (keeps the chunk lean).
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { markdownKeymap, markdownLanguage } from "@codemirror/lang-markdown";
import { HighlightStyle, bracketMatching, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, search, searchKeymap } from "@codemirror/search";
import { Compartment, EditorSelection, EditorState, StateEffect, StateField, type Extension } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  type DecorationSet,
} from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

export interface EditorHandle {
  getText(): string;
  /** Replaces the text (a reload), keeping the cursor where it can. */
  setText(text: string): void;
  /** Selects lines start..end (1-based, inclusive), scrolls them into view and marks them. */
  reveal(start: number, end: number): void;
  focus(): void;
  /** A file that is shown, never edited (a folder searched in place). */
  setReadOnly(readOnly: boolean): void;
  destroy(): void;
}

const markdownStyle = HighlightStyle.define([
  { tag: t.heading1, fontWeight: "700", fontSize: "1.3em", color: "var(--md-heading)" },
  { tag: t.heading2, fontWeight: "700", fontSize: "1.15em", color: "var(--md-heading)" },
  { tag: [t.heading3, t.heading4, t.heading5, t.heading6], fontWeight: "700", color: "var(--md-heading)" },
  { tag: t.strong, fontWeight: "700" },
  { tag: t.emphasis, fontStyle: "italic" },
  { tag: t.strikethrough, textDecoration: "line-through" },
  { tag: [t.link, t.url], color: "var(--accent)" },
  { tag: t.monospace, fontFamily: "var(--mono)", color: "var(--md-code)" },
  { tag: t.quote, color: "var(--muted)", fontStyle: "italic" },
  { tag: [t.processingInstruction, t.meta, t.contentSeparator], color: "var(--muted)" },
  { tag: t.list, color: "var(--fg)" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", color: "var(--fg)", backgroundColor: "var(--bg)", fontSize: "14px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.55" },
  ".cm-content": { caretColor: "var(--fg)", padding: "8px 0" },
  ".cm-gutters": { backgroundColor: "var(--bg-soft)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  ".cm-activeLine": { backgroundColor: "var(--active-line)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--active-line)" },
  "&.cm-focused": { outline: "none" },
  "&.cm-focused .cm-cursor": { borderLeftColor: "var(--fg)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "var(--selection)" },
  ".cm-jump-line": { backgroundColor: "var(--jump)" },
  ".cm-panels": { backgroundColor: "var(--bg-soft)", color: "var(--fg)" },
  ".cm-searchMatch": { backgroundColor: "var(--mark)" },
});

const setJump = StateEffect.define<{ from: number; to: number } | null>();

const jumpField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) {
      if (!e.is(setJump)) continue;
      if (!e.value) return Decoration.none;
      const marks = [];
      for (let n = e.value.from; n <= e.value.to; n += 1) {
        marks.push(Decoration.line({ class: "cm-jump-line" }).range(tr.state.doc.line(n).from));
      }
      return Decoration.set(marks);
    }
    return tr.docChanged ? Decoration.none : deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function createEditor(parent: HTMLElement, text: string, opts: { onChange(): void; readOnly?: boolean }): EditorHandle {
  const readOnly = new Compartment();
  const locked = (on: boolean) => [EditorState.readOnly.of(on), EditorView.editable.of(!on)];
  const extensions: Extension[] = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightActiveLine(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    highlightSelectionMatches(),
    search({ top: true }),
    markdownLanguage,
    syntaxHighlighting(markdownStyle),
    EditorView.lineWrapping,
    keymap.of([...markdownKeymap, ...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
    jumpField,
    theme,
    EditorView.contentAttributes.of({ "aria-label": "File text" }),
    readOnly.of(locked(opts.readOnly ?? false)),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) opts.onChange();
    }),
  ];
  const view = new EditorView({ parent, state: EditorState.create({ doc: text, extensions }) });

  return {
    getText: () => view.state.doc.toString(),
    setText(next) {
      const head = Math.min(view.state.selection.main.head, next.length);
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: next }, selection: { anchor: head } });
    },
    reveal(start, end) {
      const doc = view.state.doc;
      const a = Math.min(Math.max(1, start), doc.lines);
      const b = Math.min(Math.max(a, end), doc.lines);
      const from = doc.line(a).from;
      const to = doc.line(b).to;
      view.dispatch({
        selection: EditorSelection.single(from, to),
        effects: [setJump.of({ from: a, to: b }), EditorView.scrollIntoView(from, { y: "center" })],
      });
    },
    focus: () => view.focus(),
    setReadOnly: (on) => view.dispatch({ effects: readOnly.reconfigure(locked(on)) }),
    destroy: () => view.destroy(),
  };
}
