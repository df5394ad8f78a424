/**
 * The session catalog: every session file's {@link SessionInfo}, updated incrementally and cached on
 * disk, so a listing of thousands of sessions shows its first rows at once and never blocks the event
 * loop. `stat`s run synchronously in slices (an async `stat` costs several sync ones), with yields.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { isCurrent, type SessionInfo } from "./sessionInfo";
import { sessionInfoOf, storeOf } from "./store";

export interface CatalogFile {
  file: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** ms. */
export const SLICE_MS = 4;
export const FIRST_ROWS = 24;
/** Header and first user message. */
const FIRST_ROW_BYTES = 64 * 1024;
const CONCURRENCY = 8;
/** Smaller reads run synchronously: async open, stat, read and close cost more than the reading. */
const SYNC_READ_BYTES = 256 * 1024;
/** ms. */
const REPORT_MS = 100;
const CACHE_VERSION = "pi-context-session-catalog 2";
/** The cache is encoded in pieces of about this size, at most one per slice. */
const SAVE_PIECE_CHARS = 64 * 1024;

const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `stat` in slices of {@link SLICE_MS}; gone or non-regular files are left out. */
export async function statFiles(files: readonly string[]): Promise<CatalogFile[]> {
  const out: CatalogFile[] = [];
  let sliceStart = performance.now();
  for (const file of files) {
    try {
      const st = fs.statSync(file, { throwIfNoEntry: false });
      if (st && st.isFile()) out.push({ file, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
    } catch {}
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldNow();
      sliceStart = performance.now();
    }
  }
  return out;
}

/** Every `*.jsonl` of the folders, `stat`ed; a folder named twice is listed once, so no set of paths is needed. */
export async function listSessionFiles(dirs: readonly string[]): Promise<CatalogFile[]> {
  const names: string[] = [];
  const seenDirs = new Set<string>();
  for (const dir of dirs) {
    const resolved = path.resolve(dir);
    if (seenDirs.has(resolved)) continue;
    seenDirs.add(resolved);
    let entries: string[];
    try {
      entries = await fs.promises.readdir(dir);
    } catch {
      continue;
    }
    // path.join for every name, normalising an absolute `dir` once (a name holds no separator)
    const prefix = path.isAbsolute(dir) ? path.join(dir, path.sep) : undefined;
    for (const name of entries)
      if (name.endsWith(".jsonl")) names.push(prefix !== undefined ? prefix + name : path.join(dir, name));
  }
  return statFiles(names);
}

/** Read order: newest mtime first, ties by file name descending. Rows are shown in pi's order (`resumeOrder`). */
export function newestFirst(a: { mtimeMs: number; file: string }, b: { mtimeMs: number; file: string }): number {
  if (b.mtimeMs !== a.mtimeMs) return b.mtimeMs - a.mtimeMs;
  const an = path.basename(a.file);
  const bn = path.basename(b.file);
  return an < bn ? 1 : an > bn ? -1 : 0;
}

export interface ListOptions {
  /** Every file's best-known info so far, newest first (`complete: false` = still being read). */
  onProgress?: (infos: SessionInfo[], done: boolean) => void;
  signal?: AbortSignal;
}

export interface CatalogStats {
  hits: number;
  fullReads: number;
  incrementalReads: number;
  bytesRead: number;
}

export class SessionCatalog {
  private readonly infos = new Map<string, SessionInfo>();
  private readonly cacheFile: string | undefined;
  private dirty = false;
  private loaded: Promise<void> | undefined;
  readonly stats: CatalogStats = { hits: 0, fullReads: 0, incrementalReads: 0, bytesRead: 0 };

  constructor(options: { cacheFile?: string } = {}) {
    this.cacheFile = options.cacheFile;
  }

  /** Read the cache file once (missing or foreign: empty); parsing yields every {@link SLICE_MS}. */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.cacheFile) return;
      let text: string;
      try {
        text = await fs.promises.readFile(this.cacheFile, "utf8");
      } catch {
        return;
      }
      const lines = text.split("\n");
      if (lines[0] !== CACHE_VERSION) return;
      let sliceStart = performance.now();
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        if (!line) continue;
        try {
          const info = JSON.parse(line) as SessionInfo;
          if (typeof info.file === "string" && !this.infos.has(info.file)) this.infos.set(info.file, info);
        } catch {
          // a torn cache line: that file is read again
        }
        if (performance.now() - sliceStart > SLICE_MS) {
          await yieldNow();
          sliceStart = performance.now();
        }
      }
    })();
    return this.loaded;
  }

  /** Write the cache when something changed (temporary file renamed over it). Never throws. */
  async save(): Promise<void> {
    if (!this.cacheFile || !this.dirty) return;
    this.dirty = false;
    // encoded a piece at a time: encoding the whole text at once blocks the event loop
    const pieces: Buffer[] = [];
    let lines: string[] = [CACHE_VERSION];
    let chars = CACHE_VERSION.length;
    const encode = () => {
      pieces.push(Buffer.from(lines.join("\n") + "\n", "utf8"));
      lines = [];
      chars = 0;
    };
    let sliceStart = performance.now();
    for (const info of [...this.infos.values()]) {
      if (info.complete) {
        const line = JSON.stringify(info);
        lines.push(line);
        chars += line.length;
        if (chars >= SAVE_PIECE_CHARS) encode();
      }
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldNow();
        sliceStart = performance.now();
      }
    }
    if (lines.length > 0) encode();
    const tmp = `${this.cacheFile}.${process.pid}.tmp`;
    try {
      await fs.promises.mkdir(path.dirname(this.cacheFile), { recursive: true });
      await fs.promises.writeFile(tmp, Buffer.concat(pieces), { mode: 0o600 });
      await fs.promises.rename(tmp, this.cacheFile);
    } catch {
      this.dirty = true;
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    }
  }

  cached(file: string): SessionInfo | undefined {
    return this.infos.get(file);
  }

  /** Forget files no longer present (after a full listing). */
  retain(files: Iterable<string>): void {
    const keep = new Set(files);
    for (const file of [...this.infos.keys()])
      if (!keep.has(file)) {
        this.infos.delete(file);
        this.dirty = true;
      }
  }

  /**
   * The up-to-date info of one file: the cache when identity, size and mtime match, else an
   * incremental or full read; undefined when unreadable. `maxBytes`: a first row, left incomplete.
   */
  async info(
    file: string | CatalogFile,
    options: { maxBytes?: number; signal?: AbortSignal } = {},
  ): Promise<SessionInfo | undefined> {
    const path_ = typeof file === "string" ? file : file.file;
    const stat = typeof file === "string" ? (await statFiles([file]))[0] : file;
    if (!stat) {
      if (this.infos.delete(path_)) this.dirty = true;
      return undefined;
    }
    const previous = this.infos.get(path_);
    if (isCurrent(previous, stat)) {
      this.stats.hits++;
      return previous;
    }
    try {
      return this.record(path_, previous, await sessionInfoOf(path_, previous, options));
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      if (this.infos.delete(path_)) this.dirty = true;
      return undefined;
    }
  }

  private infoSync(stat: CatalogFile): SessionInfo | undefined {
    const previous = this.infos.get(stat.file);
    if (isCurrent(previous, stat)) {
      this.stats.hits++;
      return previous;
    }
    try {
      return this.record(stat.file, previous, storeOf(stat.file).infoSync!(stat.file, previous));
    } catch {
      if (this.infos.delete(stat.file)) this.dirty = true;
      return undefined;
    }
  }

  private toRead(f: CatalogFile): number {
    const previous = this.infos.get(f.file);
    if (isCurrent(previous, f)) return 0;
    return previous && previous.ino === f.ino && previous.dev === f.dev ? f.size - previous.scanned : f.size;
  }

  private record(file: string, previous: SessionInfo | undefined, info: SessionInfo): SessionInfo {
    const from = previous && previous.ino === info.ino && previous.dev === info.dev ? previous.scanned : 0;
    if (info.scanned > 0 && from > 0 && info.scanned >= from && info.ino === previous?.ino) {
      this.stats.incrementalReads++;
      this.stats.bytesRead += info.scanned - from;
    } else {
      this.stats.fullReads++;
      this.stats.bytesRead += info.scanned;
    }
    // a partial first read never replaces a complete (older) info: the full pass follows
    if (info.complete || !previous?.complete) {
      this.infos.set(file, info);
      this.dirty = true;
    }
    return info;
  }

  /**
   * Bring `files` up to date: the {@link FIRST_ROWS} newest uncached ones' beginnings first, then
   * every file (small ones synchronously). @returns readable infos, newest first. @throws AbortError.
   */
  async list(files: readonly CatalogFile[], options: ListOptions = {}): Promise<SessionInfo[]> {
    const order = [...files].sort(newestFirst);
    const snapshot = (): SessionInfo[] => {
      const out: SessionInfo[] = [];
      for (const f of order) {
        const info = this.infos.get(f.file);
        if (info && info.ino === f.ino) out.push(info);
      }
      return out;
    };
    const first = order.slice(0, FIRST_ROWS).filter((f) => !isCurrent(this.infos.get(f.file), f));
    await Promise.all(
      first.map((f) =>
        this.infos.get(f.file)?.ino === f.ino
          ? this.info(f, { ...(options.signal ? { signal: options.signal } : {}) })
          : this.info(f, { maxBytes: FIRST_ROW_BYTES, ...(options.signal ? { signal: options.signal } : {}) }),
      ),
    );
    options.onProgress?.(snapshot(), false);
    let lastReport = performance.now();
    let next = 0;
    let sliceStart = performance.now();
    const worker = async (): Promise<void> => {
      while (next < order.length) {
        options.signal?.throwIfAborted();
        const f = order[next++]!;
        if (storeOf(f.file).infoSync && this.toRead(f) <= SYNC_READ_BYTES) {
          this.infoSync(f);
          if (performance.now() - sliceStart > SLICE_MS) {
            await yieldNow();
            sliceStart = performance.now();
          }
        } else await this.info(f, options.signal ? { signal: options.signal } : {});
        if (options.onProgress && performance.now() - lastReport > REPORT_MS) {
          lastReport = performance.now();
          options.onProgress(snapshot(), false);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, order.length) }, worker));
    const result = snapshot().filter((i) => i.complete);
    options.onProgress?.(result, true);
    return result;
  }
}
