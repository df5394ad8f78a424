/**
 * Where sessions are read from: one interface over the kinds of session storage, so that a second
 * store (pi's SQLite session store, read-only through `node:sqlite`) can be added without touching
 * the surfaces. Today there is one store, pi 1.6.0's JSONL files (`session.ts`, `sessionInfo.ts`).
 *
 * Every surface that only reads a session opens it with {@link openSession} and asks for its listing
 * facts with {@link sessionInfoOf}; both pick the store that {@link SessionStore.handles} the
 * location. The write flows (`flows/`) read with `SessionFile.open(path, { digest: true })` on
 * purpose: the write path appends JSONL lines after a byte-for-byte check, which only the JSONL store
 * has ({@link SessionStore.writable}); a session of another store is refused there ("not a pi session").
 * What a second store would change is written down in docs/architecture.md ("Session stores").
 */

import { SessionFile, type OpenOptions } from "./session";
import { readSessionInfo, readSessionInfoSync, type SessionInfo, type ReadInfoOptions } from "./sessionInfo";

/** One kind of session storage. */
export interface SessionStore {
  /** Short name for logs and messages (`jsonl`). */
  readonly kind: string;
  /** pi-context may append to its sessions (the write flows' change check needs the raw bytes). */
  readonly writable: boolean;
  /** True when `location` (a path, or a store's own locator) is a session of this store. */
  handles(location: string): boolean;
  /**
   * Read one session into pi-context's index (`SessionFile`: records, ids, leaf, bodies; a store
   * without JSONL bytes builds it with `SessionFile.fromBytes` of its entries as pi serialises them).
   * @throws the store's error when it cannot be read (`ENOENT`, `NotARegularFileError` …).
   */
  open(location: string, options?: OpenOptions): Promise<SessionFile>;
  /** pi's listing facts of one session (`buildSessionInfo`), incrementally from `previous` where the store can. */
  info(location: string, previous?: SessionInfo, options?: ReadInfoOptions): Promise<SessionInfo>;
  /** {@link info} read synchronously (small sessions in the listing); absent when the store cannot. */
  infoSync?(location: string, previous?: SessionInfo): SessionInfo;
}

/** pi 1.6.0's own store: one `.jsonl` file per session, appended line by line. */
export const JSONL_STORE: SessionStore = {
  kind: "jsonl",
  writable: true,
  handles: () => true,
  open: (location, options) => SessionFile.open(location, options),
  info: (location, previous, options) => readSessionInfo(location, previous, options),
  infoSync: (location, previous) => readSessionInfoSync(location, previous),
};

/** The stores asked in order; the JSONL store (which takes any path) last. */
const stores: SessionStore[] = [];

/**
 * Add a store before the JSONL one (a second store registers itself where it is built, e.g. the
 * composition root). @returns a function that removes it again (tests).
 */
export function registerSessionStore(store: SessionStore): () => void {
  stores.push(store);
  return () => {
    const i = stores.indexOf(store);
    if (i >= 0) stores.splice(i, 1);
  };
}

/** The store of `location`: the first registered one that handles it, else the JSONL store. */
export function storeOf(location: string): SessionStore {
  return stores.find((s) => s.handles(location)) ?? JSONL_STORE;
}

/** Read one session for showing it (never for writing: see the file comment). */
export function openSession(location: string, options?: OpenOptions): Promise<SessionFile> {
  return storeOf(location).open(location, options);
}

/** pi's listing facts of one session, from its store. */
export function sessionInfoOf(
  location: string,
  previous?: SessionInfo,
  options?: ReadInfoOptions,
): Promise<SessionInfo> {
  return storeOf(location).info(location, previous, options);
}
