// Made from the Rust types that cross between cairn-desktop and the page; do not
// edit. A test of cairn-desktop checks it; `CAIRN_UPDATE_IPC=1 cargo test -p
// cairn-desktop contract` writes it.

export type * from "./types/agent";
export type * from "./types/workspace";
export type * from "./types/settings";
