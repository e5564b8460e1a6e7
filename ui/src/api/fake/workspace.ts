// The fake backend's workspace: files in a Map with versions, the tree, and a small search.
import { appError } from "../errors";
import type { FileNode, FileText, SavedFile, SearchHit, SearchResults, Trashed } from "../types";

export function isoDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export function starterFiles(now: number): Record<string, string> {
  const today = isoDate(now);
  const yesterday = isoDate(now - 86_400_000);
  return {
    "AGENTS.md":
      "# How to work here\n\n- Keep answers short unless asked.\n- Save durable facts with memory_save.\n- Prefer the files in knowledge/ over guessing.\n",
    "MEMORY.md":
      "# Memory\n\n## People\n- Ana prefers morning meetings and short agendas.\n- Tom is the contact for the garden project.\n\n## Projects\n- The garden project: raised beds, tomatoes and basil; watering every other day.\n- Cairn notes live in knowledge/cairn.md.\n",
    [`memory/${today}.md`]:
      `# ${today}\n\n- Asked about the garden watering schedule; settled on every other day.\n- Ana moved the review to Thursday morning.\n`,
    [`memory/${yesterday}.md`]:
      `# ${yesterday}\n\n- Planted basil next to the tomatoes.\n- Tom will bring compost on Saturday.\n`,
    "knowledge/cairn.md":
      "# Cairn\n\nA local agent that keeps its memory as markdown files.\n\n## Search\nPress Ctrl+K to search memory. Results show the file, the heading and the lines.\n\n## Editing\nFiles open in the editor on the right; Ctrl+S saves.\n",
    "knowledge/garden.md":
      "# Garden\n\n## Watering\nTomatoes need deep watering every other day in summer.\nBasil likes moist soil but not wet leaves.\n\n## Compost\nTurn the compost heap weekly.\n",
    "prompts/review.md":
      "---\ndescription: Review a file for one thing\narguments: [file, focus]\n---\n\nReview $1 and report only on $2.\n",
    "skills/summarize/SKILL.md":
      "---\nname: summarize\ndescription: Summarize a long document into bullets.\n---\n\n# Summarize\n\n1. Read the document.\n2. Write at most seven bullets.\n",
  };
}

interface Stored {
  text: string;
  version: string;
}

function refuse(path: string): void {
  if (!path.trim() || path.startsWith(".cairn") || path.startsWith("sessions") || path.includes("..") || path.startsWith("/")) {
    throw appError("invalid_path", `${path} is outside the writable workspace`);
  }
}

export class FakeWorkspace {
  private files = new Map<string, Stored>();
  /** Folders made empty (folders with files come from the files' paths). */
  private folders = new Set<string>();
  private trash: { item: Trashed; files: [string, Stored][]; folders: string[] }[] = [];
  private counter = 0;

  constructor(initial: Record<string, string>) {
    for (const [path, text] of Object.entries(initial)) this.put(path, text);
  }

  private nextVersion(): string {
    this.counter += 1;
    return `v${this.counter}`;
  }

  has(path: string): boolean {
    return this.files.has(path);
  }

  /** Writes without any check (the agent or the outside world); returns the new version. */
  put(path: string, text: string): string {
    const version = this.nextVersion();
    this.files.set(path, { text, version });
    return version;
  }

  text(path: string): string {
    return this.files.get(path)?.text ?? "";
  }

  read(path: string): FileText {
    const f = this.files.get(path);
    if (!f) throw appError("not_found", `${path} does not exist`);
    return { path, text: f.text, version: f.version, read_only: false };
  }

  write(path: string, text: string, base: string | null): SavedFile {
    if (path.startsWith(".cairn/") || path.includes("..") || path.startsWith("/")) {
      throw appError("invalid_path", `${path} is outside the writable workspace`);
    }
    const f = this.files.get(path);
    if (base !== null && f && f.version !== base) {
      throw appError("conflict", `${path} changed on disk since it was read`);
    }
    return { path, version: this.put(path, text) };
  }

  /** Whether a file or folder is at `path`. */
  exists(path: string): boolean {
    return this.files.has(path) || this.folders.has(path) || this.paths().some((p) => p.startsWith(`${path}/`));
  }

  createFile(path: string): SavedFile {
    refuse(path);
    if (this.exists(path)) throw appError("conflict", `${path} already exists; choose another name`);
    return { path, version: this.put(path, "") };
  }

  createFolder(path: string): void {
    refuse(path);
    if (this.exists(path)) throw appError("conflict", `${path} already exists; choose another name`);
    this.folders.add(path);
  }

  /** Files and folders at `path` or beneath it. */
  private under(path: string): { files: string[]; folders: string[] } {
    const inside = (p: string) => p === path || p.startsWith(`${path}/`);
    return { files: [...this.files.keys()].filter(inside), folders: [...this.folders].filter(inside) };
  }

  move(from: string, to: string): void {
    refuse(from);
    refuse(to);
    if (!this.exists(from)) throw appError("not_found", `${from} does not exist`);
    if (to === from || to.startsWith(`${from}/`)) throw appError("invalid", `${from} cannot be moved into itself`);
    if (this.exists(to)) throw appError("conflict", `${to} already exists; choose another name`);
    const { files, folders } = this.under(from);
    const renamed = (p: string) => to + p.slice(from.length);
    for (const p of files) {
      const f = this.files.get(p);
      this.files.delete(p);
      if (f) this.files.set(renamed(p), f);
    }
    for (const p of folders) {
      this.folders.delete(p);
      this.folders.add(renamed(p));
    }
  }

  trashPath(path: string, now: number): Trashed {
    refuse(path);
    if (!this.exists(path)) throw appError("not_found", `${path} does not exist`);
    const { files, folders } = this.under(path);
    const item: Trashed = { id: `t${this.nextVersion()}`, path, dir: !this.files.has(path), deleted_at: new Date(now).toISOString() };
    this.trash.unshift({ item, files: files.map((p) => [p, this.files.get(p) as Stored]), folders });
    files.forEach((p) => this.files.delete(p));
    folders.forEach((p) => this.folders.delete(p));
    return item;
  }

  trashed(): Trashed[] {
    return this.trash.map((t) => t.item);
  }

  restore(id: string): Trashed {
    const at = this.trash.findIndex((t) => t.item.id === id);
    const entry = this.trash[at];
    if (!entry) throw appError("not_found", `nothing in the trash has the id \`${id}\``);
    if (this.exists(entry.item.path)) throw appError("conflict", `\`${entry.item.path}\` exists again; move or rename it first, then restore`);
    entry.files.forEach(([p, f]) => this.files.set(p, f));
    entry.folders.forEach((p) => this.folders.add(p));
    if (entry.item.dir && entry.files.length === 0) this.folders.add(entry.item.path);
    this.trash.splice(at, 1);
    return entry.item;
  }

  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  tree(): FileNode[] {
    const root: FileNode = { name: "", path: "", dir: true, children: [] };
    const entries: [string, boolean][] = [...this.paths().map((p): [string, boolean] => [p, false]), ...[...this.folders].map((p): [string, boolean] => [p, true])];
    for (const [path, isFolder] of entries) {
      const parts = path.split("/");
      let node = root;
      parts.forEach((name, i) => {
        const sub = parts.slice(0, i + 1).join("/");
        const dir = isFolder || i < parts.length - 1;
        let child = node.children.find((c) => c.name === name && c.dir === dir);
        if (!child) {
          child = { name, path: sub, dir, children: [] };
          node.children.push(child);
        }
        node = child;
      });
    }
    const sort = (nodes: FileNode[]): FileNode[] =>
      nodes
        .sort((a, b) => (a.dir === b.dir ? a.name.localeCompare(b.name) : a.dir ? -1 : 1))
        .map((n) => ({ ...n, children: sort(n.children) }));
    return sort(root.children);
  }

  chunks(): { path: string; start: number; end: number; heading: string; lines: string[] }[] {
    const out: { path: string; start: number; end: number; heading: string; lines: string[] }[] = [];
    for (const path of this.paths()) {
      if (!path.endsWith(".md")) continue;
      const lines = this.text(path).split("\n");
      let start = 0;
      let heading = "";
      const flush = (end: number) => {
        if (end > start) out.push({ path, start: start + 1, end, heading, lines: lines.slice(start, end) });
      };
      lines.forEach((line, i) => {
        const m = /^#{1,6}\s+(.*)$/.exec(line);
        if (m && i > start) {
          flush(i);
          start = i;
        }
        if (m) heading = m[1] ?? "";
      });
      flush(lines.length);
    }
    return out;
  }

  search(query: string, limit: number): SearchResults {
    const words = query.toLowerCase().split(/\W+/).filter((w) => w.length > 1);
    const hits: (SearchHit & { score: number })[] = [];
    if (words.length === 0) return { hits: [], stale: false, took_ms: 0, mode: null, coverage: null };
    for (const c of this.chunks()) {
      const body = c.lines.filter((l) => l.trim() && !/^#{1,6}\s/.test(l)).join(" ");
      const lower = body.toLowerCase();
      const score = words.reduce((s, w) => s + (lower.split(w).length - 1), 0);
      if (score === 0) continue;
      hits.push({ path: c.path, start_line: c.start, end_line: c.end, heading: c.heading, parts: highlight(body, words), page: null, folder: null, day: /^memory\/(\d{4}-\d{2}-\d{2})\.md$/.exec(c.path)?.[1] ?? null, score });
    }
    hits.sort((a, b) => b.score - a.score);
    return {
      hits: hits.slice(0, limit).map(({ score: _score, ...h }) => h),
      stale: false,
      took_ms: 1,
      mode: "keyword",
      coverage: null,
    };
  }
}

/** Cuts `text` around its first match into parts, marking the matched words. */
export function highlight(text: string, words: string[]): { text: string; hit: boolean }[] {
  const lower = text.toLowerCase();
  const first = Math.min(...words.map((w) => (lower.includes(w) ? lower.indexOf(w) : Infinity)));
  const from = Math.max(0, first - 60);
  const snippet = (from > 0 ? "…" : "") + text.slice(from, from + 220) + (text.length > from + 220 ? "…" : "");
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`(${escaped.join("|")})`, "gi");
  return snippet
    .split(re)
    .filter((t) => t !== "")
    .map((t) => ({ text: t, hit: words.includes(t.toLowerCase()) }));
}
