/** The session listing: the catalog (`core/read/catalog.ts`) cached in global storage. */

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

  /** Newest first, with progress; `files` with their `stat` so the first rows need no `stat`. */
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

  /** pi's rule over its name (a loaded index is exact) and first user message. */
  async labelOf(file: string, name?: string): Promise<string> {
    let info = this.catalog.cached(file);
    if (!info || (!info.firstMessage && !info.complete)) {
      info = await this.catalog.info(file, { maxBytes: LABEL_PROBE_BYTES }).catch(() => undefined);
      void this.catalog.save();
    }
    return sessionLabel({ name: name ?? info?.name, firstMessage: info?.firstMessage });
  }
}
