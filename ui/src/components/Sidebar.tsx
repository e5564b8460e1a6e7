import { memo } from "react";
import { FileTree } from "./FileTree";
import { SessionList, type SessionListProps } from "./SessionList";

export const Sidebar = memo(function Sidebar({ sessions, openPath, onOpenFile }: { sessions: SessionListProps; openPath: string | null; onOpenFile(path: string): void }) {
  return (
    <aside className="sidebar" aria-label="Sessions and files">
      <SessionList {...sessions} />
      <FileTree openPath={openPath} onOpen={onOpenFile} />
    </aside>
  );
});
