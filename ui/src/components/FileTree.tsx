import { useCallback, useEffect, useRef, useState } from "react";
import { toAppError, describeError } from "../api/errors";
import type { FileNode } from "../api/types";
import { useBackend } from "../lib/backendContext";
import { useAppEvents } from "../lib/hub";
import { Icon } from "./Icon";

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

  const toggle = (path: string) =>
    setExpanded((e) => {
      const next = new Set(e ?? []);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });

  const render = (list: FileNode[], depth: number) =>
    list.map((n) => {
      const open = expanded?.has(n.path) ?? false;
      return (
        <li key={n.path} role="treeitem" aria-expanded={n.dir ? open : undefined} aria-selected={n.path === openPath}>
          <button
            type="button"
            className={n.path === openPath ? "tree-row active" : "tree-row"}
            style={{ paddingLeft: 8 + depth * 14 }}
            data-testid="tree-item"
            data-path={n.path}
            title={n.path}
            onClick={() => (n.dir ? toggle(n.path) : onOpen(n.path))}
          >
            {n.dir ? <Icon name={open ? "chevronDown" : "chevronRight"} size={12} /> : <span className="tree-spacer" />}
            <Icon name={n.dir ? "folder" : "file"} size={14} />
            <span className="tree-name">{n.name}</span>
          </button>
          {n.dir && open && n.children.length > 0 && <ul role="group">{render(n.children, depth + 1)}</ul>}
        </li>
      );
    });

  return (
    <nav className="file-tree" data-testid="file-tree" aria-label="Workspace files">
      <div className="sidebar-head">
        <h2>Workspace</h2>
        <button type="button" className="icon-button small" aria-label="Refresh files" title="Refresh" onClick={load}>
          <Icon name="retry" size={14} />
        </button>
      </div>
      {error && <div className="notice error">{error}</div>}
      {nodes === null && !error && <div className="muted small pad">Loading…</div>}
      {nodes && nodes.length === 0 && <div className="muted small pad">The workspace is empty.</div>}
      {nodes && <ul role="tree">{render(nodes, 0)}</ul>}
    </nav>
  );
}
