// The web view's own context menu offers Back, Forward and Reload, which mean nothing in
// the app (Reload would throw the page away). It stays where it helps: in text fields and
// the editor (cut, copy, paste) and over selected text (copy).

/** Whether a right-click on `target` should get the web view's menu. */
export function wantsMenu(target: EventTarget | null, selection: string): boolean {
  if (selection.trim() !== "") return true;
  if (!(target instanceof Element)) return false;
  return target.closest("input, textarea, [contenteditable=''], [contenteditable=true]") !== null;
}

export function limitContextMenu(win: Window): void {
  win.addEventListener("contextmenu", (e) => {
    if (!wantsMenu(e.target, win.getSelection()?.toString() ?? "")) e.preventDefault();
  });
}
