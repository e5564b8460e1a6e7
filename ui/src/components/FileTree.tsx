import { useCallback, useEffect, useRef, useState } from "react";
import { toAppError, describeError } from "../api/errors";
import type { FileNode, OutsideFolder, Trashed } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { useAppEvents } from "../lib/hub";
import { Icon } from "./Icon";
import { isPicture } from "../lib/pictures";
import { PathPrompt, TrashDialog } from "./TreeDialogs";

/** A name to ask for: a new file or folder (in `dir`), or a new place for `from`. */
type Prompt = { kind: "file" | "folder"; dir: string } | { kind: "move"; from: string; isDir: boolean };

const KEY = "cairn.tree.expanded";

function loadExpanded(): Set<string> | null {
  try {
    const raw = localStorage.getItem(KEY);
    return raw ? new Set(JSON.parse(raw) as string[]) : null;
  } catch {
    return null;
  }
}

function ancestors(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

export function FileTree({ openPath, onOpen }: { openPath: string | null; onOpen(path: string): void }) {
  const backend = useBackend();
  const [nodes, setNodes] = useState<FileNode[] | null>(null);
  // Folders searched in place: shown under their own heading, read-only.
  const [outside, setOutside] = useState<OutsideFolder[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [expanded, setExpanded] = useState<Set<string> | null>(loadExpanded);
  const timer = useRef<number | undefined>(undefined);
  // Top-level folders seen so far: one that appears later (made by a tool) opens unfolded.
  const seen = useRef<Set<string> | null>(null);

  const load = useCallback(() => {
    backend
      .listFiles()
      .then((list) => {
        setNodes(list);
        setError(null);
        const dirs = list.filter((n) => n.dir).map((n) => n.path);
        const fresh = seen.current ? dirs.filter((d) => !seen.current?.has(d)) : [];
        seen.current = new Set(dirs);
        setExpanded((e) => (e ? (fresh.length ? new Set([...e, ...fresh]) : e) : new Set(dirs)));
      })
      .catch((e: unknown) => setError(describeError(toAppError(e))));
    backend
      .listFolders()
      .then(setOutside)
      .catch(() => setOutside([]));
  }, [backend]);

  useEffect(load, [load]);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  useAppEvents((e) => {
    if (e.type !== "files_changed") return;
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(load, 100);
  });

  // Show the open file: unfold the folders above it.
  useEffect(() => {
    if (!openPath) return;
    setExpanded((e) => {
      const next = new Set(e ?? []);
      ancestors(openPath).forEach((a) => next.add(a));
      return next;
    });
  }, [openPath]);

  useEffect(() => {
    if (expanded) localStorage.setItem(KEY, JSON.stringify([...expanded]));
  }, [expanded]);

  const [menuFor, setMenuFor] = useState<string | null>(null);
  const [prompt, setPrompt] = useState<Prompt | null>(null);
  const [trashOpen, setTrashOpen] = useState(false);
  const [deleted, setDeleted] = useState<Trashed | null>(null);
  // An action's failure stays until dismissed (the tree reloads on every outside change).
  const [failed, setFailed] = useState<string | null>(null);

  const act = (work: () => Promise<unknown>) => {
    setMenuFor(null);
    setFailed(null);
    work()
      .then(load)
      .catch((e: unknown) => setFailed(describeError(toAppError(e))));
  };

  const remove = (path: string) =>
    act(async () => {
      const item = await backend.trashPath(path);
      setDeleted(item);
    });

  const undo = (item: Trashed) =>
    act(async () => {
      await backend.restoreTrash(item.id);
      setDeleted(null);
    });

  const submitPrompt = async (path: string) => {
    if (!prompt) return;
    if (prompt.kind === "move") {
      const { from, isDir } = prompt;
      await backend.movePath(from, path);
      // The open file (or the folder holding it) moved: follow it.
      if (openPath !== null && (openPath === from || (isDir && openPath.startsWith(`${from}/`)))) {
        onOpen(path + openPath.slice(from.length));
      }
    } else if (prompt.kind === "file") {
      await backend.createFile(path);
      onOpen(path);
    } else {
      await backend.createFolder(path);
      setExpanded((e) => new Set([...(e ?? []), ...ancestors(path), path]));
    }
    load();
  };

  const onRowKey = (e: React.KeyboardEvent, n: FileNode) => {
    if (e.key === "F2") {
      e.preventDefault();
      setPrompt({ kind: "move", from: n.path, isDir: n.dir });
    } else if (e.key === "Delete") {
      e.preventDefault();
      remove(n.path);
    }
  };

  const menu = (n: FileNode, readOnly: boolean) => (
    <div className="menu" role="menu" data-testid="tree-menu" onKeyDown={(e) => e.key === "Escape" && (e.stopPropagation(), setMenuFor(null))}>
      {readOnly ? (
        <button type="button" role="menuitem" autoFocus onClick={() => act(() => backend.revealPath(n.path))}>
          Show in file manager
        </button>
      ) : (
        editMenu(n)
      )}
    </div>
  );

  const editMenu = (n: FileNode) => (
    <>
      {n.dir && (
        <>
          <button type="button" role="menuitem" autoFocus onClick={() => (setMenuFor(null), setPrompt({ kind: "file", dir: n.path }))}>
            New file here
          </button>
          <button type="button" role="menuitem" onClick={() => (setMenuFor(null), setPrompt({ kind: "folder", dir: n.path }))}>
            New folder here
          </button>
        </>
      )}
      <button type="button" role="menuitem" autoFocus={!n.dir} onClick={() => (setMenuFor(null), setPrompt({ kind: "move", from: n.path, isDir: n.dir }))}>
        Rename or move…
      </button>
      <button type="button" role="menuitem" className="danger" onClick={() => remove(n.path)}>
        Delete
      </button>
      <button type="button" role="menuitem" onClick={() => act(() => backend.revealPath(n.path))}>
        Show in file manager
      </button>
    </>
  );

  const toggle = (path: string) =>
    setExpanded((e) => {
      const next = new Set(e ?? []);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });

  const render = (list: FileNode[], depth: number, readOnly = false) =>
    list.map((n) => {
      const open = expanded?.has(n.path) ?? false;
      return (
        <li key={n.path} role="treeitem" aria-expanded={n.dir ? open : undefined} aria-selected={n.path === openPath}>
          <div className="tree-line">
            <button
              type="button"
              className={n.path === openPath ? "tree-row active" : "tree-row"}
              style={{ paddingLeft: 8 + depth * 14 }}
              data-testid="tree-item"
              data-path={n.path}
              title={n.path}
              onClick={() => (n.dir ? toggle(n.path) : onOpen(n.path))}
              onKeyDown={readOnly ? undefined : (e) => onRowKey(e, n)}
              onContextMenu={(e) => {
                e.preventDefault();
                setMenuFor(n.path);
              }}
            >
              {n.dir ? <Icon name={open ? "chevronDown" : "chevronRight"} size={12} /> : <span className="tree-spacer" />}
              <Icon name={n.dir ? "folder" : isPicture(n.path) ? "image" : "file"} size={14} />
              <span className="tree-name">{n.name}</span>
            </button>
            <button
              type="button"
              className="icon-button small tree-more"
              aria-label={`Actions for ${n.path}`}
              aria-haspopup="menu"
              aria-expanded={menuFor === n.path}
              onClick={() => setMenuFor(menuFor === n.path ? null : n.path)}
            >
              <Icon name="more" size={14} />
            </button>
          </div>
          {menuFor === n.path && menu(n, readOnly)}
          {n.dir && open && n.children.length > 0 && <ul role="group">{render(n.children, depth + 1, readOnly)}</ul>}
        </li>
      );
    });

  return (
    <nav className="file-tree" data-testid="file-tree" aria-label="Workspace files">
      <div className="sidebar-head">
        <h2>Workspace</h2>
        <div className="row">
          <button type="button" className="icon-button small" aria-label="New file" title="New file" onClick={() => setPrompt({ kind: "file", dir: "" })}>
            <Icon name="plus" size={14} />
          </button>
          <button type="button" className="icon-button small" aria-label="New folder" title="New folder" onClick={() => setPrompt({ kind: "folder", dir: "" })}>
            <Icon name="folder" size={14} />
          </button>
          <button type="button" className="icon-button small" aria-label="Trash" title="Trash" onClick={() => setTrashOpen(true)}>
            <Icon name="trash" size={14} />
          </button>
          <button type="button" className="icon-button small" aria-label="Refresh files" title="Refresh" onClick={load}>
            <Icon name="retry" size={14} />
          </button>
        </div>
      </div>
      {error && <div className="notice error">{error}</div>}
      {failed && (
        <div className="notice error" role="alert">
          {failed}
          <button type="button" className="icon-button small" aria-label="Dismiss" onClick={() => setFailed(null)}>
            ×
          </button>
        </div>
      )}
      {deleted && (
        <div className="notice" role="status" data-testid="deleted-notice">
          Moved {deleted.path} to the trash.
          <button type="button" onClick={() => undo(deleted)}>
            Undo
          </button>
        </div>
      )}
      {nodes === null && !error && <div className="muted small pad">Loading…</div>}
      {nodes && nodes.length === 0 && <div className="muted small pad">The workspace is empty.</div>}
      {nodes && <ul role="tree">{render(nodes, 0)}</ul>}
      {outside.length > 0 && (
        <section className="outside-folders" data-testid="outside-folders" aria-label="Folders searched in place">
          <div className="sidebar-head">
            <h2 title="Searched and read by Cairn, never changed (Settings → Memory)">Searched in place</h2>
          </div>
          {outside.map((f) => (
            <div key={f.name} data-testid="outside-folder" data-name={f.name}>
              <div className="outside-folder-head" title={f.root || undefined}>
                <Icon name="folder" size={14} />
                <span className="tree-name">{f.name}</span>
                <span className="badge">read-only</span>
                {f.root && (
                  <button type="button" className="small-button" aria-label={`Show ${f.name} in file manager`} title="Show in file manager" onClick={() => act(() => backend.revealPath(f.name))}>
                    Show
                  </button>
                )}
              </div>
              {f.problem && <div className="muted small pad">{f.problem}</div>}
              {f.children.length > 0 && <ul role="tree" aria-label={f.name}>{render(f.children, 1, true)}</ul>}
              {f.truncated && <div className="muted small pad">More files than are listed here; search reaches them all.</div>}
            </div>
          ))}
        </section>
      )}
      {prompt && (
        <PathPrompt
          title={prompt.kind === "file" ? "New file" : prompt.kind === "folder" ? "New folder" : "Rename or move"}
          label={prompt.kind === "move" ? `New path of ${prompt.from}` : "Path in the workspace"}
          initial={prompt.kind === "move" ? prompt.from : prompt.dir ? `${prompt.dir}/` : prompt.kind === "file" ? "knowledge/" : ""}
          action={prompt.kind === "move" ? "Move" : "Create"}
          submit={submitPrompt}
          onClose={() => setPrompt(null)}
        />
      )}
      {trashOpen && <TrashDialog onClose={() => setTrashOpen(false)} onRestored={() => load()} />}
    </nav>
  );
}
