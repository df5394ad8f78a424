/**
 * One interface over session storage, so a second store (pi's SQLite) can be added without touching
 * the surfaces (docs/architecture.md, "Session stores"). Write flows read with `SessionFile.open(…,
 * { digest: true })`: only the JSONL store has the bytes the change check needs.
 */

import { SessionFile, type OpenOptions } from "./session";
import { readSessionInfo, readSessionInfoSync, type SessionInfo, type ReadInfoOptions } from "./sessionInfo";

export interface SessionStore {
  readonly kind: string;
  /** The write flows' change check needs the raw bytes. */
  readonly writable: boolean;
  handles(location: string): boolean;
  /** @throws the store's error when it cannot be read (`ENOENT`, `NotARegularFileError` …). */
  open(location: string, options?: OpenOptions): Promise<SessionFile>;
  /** pi's `buildSessionInfo`, incrementally from `previous` where the store can. */
  info(location: string, previous?: SessionInfo, options?: ReadInfoOptions): Promise<SessionInfo>;
  /** Absent when the store cannot read synchronously. */
  infoSync?(location: string, previous?: SessionInfo): SessionInfo;
}

export const JSONL_STORE: SessionStore = {
  kind: "jsonl",
  writable: true,
  handles: () => true,
  open: (location, options) => SessionFile.open(location, options),
  info: (location, previous, options) => readSessionInfo(location, previous, options),
  infoSync: (location, previous) => readSessionInfoSync(location, previous),
};

/** Asked in order; the JSONL store (which takes any path) last. */
const stores: SessionStore[] = [];

/** Add a store before the JSONL one. @returns a function that removes it again (tests). */
export function registerSessionStore(store: SessionStore): () => void {
  stores.push(store);
  return () => {
    const i = stores.indexOf(store);
    if (i >= 0) stores.splice(i, 1);
  };
}

export function storeOf(location: string): SessionStore {
  return stores.find((s) => s.handles(location)) ?? JSONL_STORE;
}

/** Read one session for showing it (never for writing: see the file comment). */
export function openSession(location: string, options?: OpenOptions): Promise<SessionFile> {
  return storeOf(location).open(location, options);
}

export function sessionInfoOf(
  location: string,
  previous?: SessionInfo,
  options?: ReadInfoOptions,
): Promise<SessionInfo> {
  return storeOf(location).info(location, previous, options);
}
