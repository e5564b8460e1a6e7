// The fake backend's folders searched in place: listed and read under their names, never
// written; and the documents it can show page by page.
import { appError } from "../errors";
import type { DocumentPage, DocumentText, FileText, OutsideFolder } from "../types";
import { FakeWorkspace } from "./workspace";

export interface FakeFolder {
  name: string;
  root: string;
  files: Record<string, string>;
  /** Why it cannot be listed (then it has no files). */
  problem?: string;
}

export const DOCUMENT = /\.(pdf|docx|odt|epub)$/i;

export class FakeFolders {
  private readonly folders: { folder: FakeFolder; files: FakeWorkspace }[];

  constructor(folders: FakeFolder[]) {
    this.folders = folders.map((folder) => ({
      folder,
      files: new FakeWorkspace(Object.fromEntries(Object.entries(folder.files).map(([p, t]) => [`${folder.name}/${p}`, t]))),
    }));
  }

  /** Whether `path` names something in a folder (`Notes` or `Notes/...`). */
  owns(path: string): boolean {
    return this.folders.some(({ folder }) => path === folder.name || path.startsWith(`${folder.name}/`));
  }

  /** Refuses a write to a folder's path, as the app does. */
  refuseWrite(...paths: string[]): void {
    const inside = paths.find((p) => this.owns(p));
    if (inside !== undefined) throw appError("invalid_path", `\`${inside}\` is in a folder searched in place (outside the workspace): Cairn reads it but never writes it`);
  }

  list(): OutsideFolder[] {
    return this.folders.map(({ folder, files }) => ({
      name: folder.name,
      root: folder.root,
      children: files.tree()[0]?.children ?? [],
      truncated: false,
      problem: folder.problem ?? null,
    }));
  }

  read(path: string): FileText {
    const owner = this.folders.find(({ folder }) => path.startsWith(`${folder.name}/`));
    if (!owner) throw appError("not_found", `${path} does not exist`);
    return { ...owner.files.read(path), read_only: true };
  }
}

export function readDocument(documents: Record<string, DocumentPage[]>, path: string): DocumentText {
  if (!DOCUMENT.test(path)) throw appError("invalid", `${path} is not a document (PDF, DOCX, ODT or EPUB)`);
  const pages = documents[path];
  if (!pages) throw appError("not_found", `${path}: No such file or directory`);
  const kind = (/\.([a-z]+)$/i.exec(path)?.[1] ?? "pdf").toLowerCase();
  const empty = pages.every((p) => !p.text.trim());
  return { path, kind, pages, note: empty ? "This document has no text; open it in a viewer." : null };
}

/** What `npm run dev` shows: a notes folder, and a PDF in the workspace. */
export const STARTER_FOLDERS: FakeFolder[] = [
  {
    name: "Notes",
    root: "/home/ada/Notes",
    files: {
      "trips/croatia.md": "# Croatia\n\nSplit in June: the ferry to Hvar leaves at 9.\n",
      "reading.md": "# Reading\n\n- The Overstory\n",
    },
  },
];

export const STARTER_DOCUMENTS: Record<string, DocumentPage[]> = {
  "knowledge/inbox/tide-tables.pdf": [
    { number: 1, text: "# Tide tables\n\nHigh and low water for the harbour, spring 2026." },
    { number: 2, text: "March: high water at 06:12 and 18:40 on the 14th." },
    { number: 3, text: "April: the lowest tide of the season falls on the 9th, at 12:03." },
  ],
};
