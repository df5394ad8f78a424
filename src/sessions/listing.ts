/**
 * The session listing of the extension: the catalog (`core/read/catalog.ts`) with its cache in
 * the extension's global storage, the Select Session listing (first rows at once, the rest as
 * they are read) and the labels of single sessions (pi's rule).
 */

import * as path from "node:path";
import { SessionCatalog, statFiles, type CatalogFile } from "../core/read/catalog";
import type { SessionInfo } from "../core/read/sessionInfo";
import { sessionLabel } from "../core/rules/sessionLabel";
import type { SessionListOptions } from "../services";

/** Bytes read of a session to learn its label when it is not in the listing cache (header + first user message). */
const LABEL_PROBE_BYTES = 256 * 1024;

/** The catalog and what the source asks of it. */
export class SessionListing {
  readonly catalog: SessionCatalog;

  constructor(cacheFile: string | undefined) {
    this.catalog = new SessionCatalog(cacheFile ? { cacheFile } : {});
  }

  /**
   * The sessions among `files`, newest first, with progress (see `SessionSource.listSessions`).
   * `files` with their `stat` (the scanner's last look, so the first rows need no `stat`), or paths.
   */
  async list(files: readonly (string | CatalogFile)[], options: SessionListOptions = {}): Promise<SessionInfo[]> {
    await this.catalog.load();
    const paths = files.filter((f): f is string => typeof f === "string");
    const stats = [...files.filter((f): f is CatalogFile => typeof f !== "string"), ...(await statFiles(paths))];
    const onProgress = options.onProgress;
    const result = await this.catalog.list(stats, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(onProgress
        ? {
            onProgress: (infos: SessionInfo[], done: boolean) =>
              onProgress(
                infos.filter((i) => i.state === "session"),
                done,
              ),
          }
        : {}),
    });
    void this.catalog.save();
    return result.filter((i) => i.state === "session");
  }

  /** One file's info, up to date; undefined when it is not a session. */
  async info(file: string): Promise<SessionInfo | undefined> {
    await this.catalog.load();
    const info = await this.catalog.info(path.resolve(file));
    void this.catalog.save();
    return info?.state === "session" ? info : undefined;
  }

  /**
   * The label of a session: pi's rule over its name (the caller's: a loaded index is exact; default
   * the listing's) and its first user message (the listing's; the beginning of the file is read
   * when it is not cached).
   */
  async labelOf(file: string, name?: string): Promise<string> {
    let info = this.catalog.cached(file);
    if (!info || (!info.firstMessage && !info.complete)) {
      info = await this.catalog.info(file, { maxBytes: LABEL_PROBE_BYTES }).catch(() => undefined);
      void this.catalog.save();
    }
    return sessionLabel({ name: name ?? info?.name, firstMessage: info?.firstMessage });
  }
}
