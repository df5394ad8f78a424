/**
 * pi's `/fork` and `/clone` (`rules/fork.ts`) as a new session file next to the source, which is only
 * read. Not an append: {@link createSessionFile} creates exclusively, writes pi's lines, syncs, and
 * removes what it created on failure. No access check: the source is never written.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as l10n from "@vscode/l10n";
import { recordOwnWrite } from "../access/ownWrites";
import { SessionFile } from "../read/session";
import type { EntryRecord } from "../read/entries";
import {
  branchedEntries,
  forkHeader,
  forkMessageText,
  forkTarget,
  ForkTargetError,
  hasConversation,
  labelsOf,
  sessionFileName,
  sessionIdV7,
  type ForkHeader,
  type ForkPosition,
  type ForkTarget,
  type RawEntry,
} from "../rules/fork";
import { getPath } from "../rules/tree";
import { formatCount } from "../../shared/format";
import { newEntryId, serializeEntryLine, SessionWriteError } from "./write";

/** Not a session pi opens as it is, or a path pi cannot walk; nothing was written. */
export class ForkSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForkSourceError";
  }
}

/** pi writes no file: the path is empty or holds no user/assistant message yet (pi keeps it in memory). */
export class NothingToForkError extends Error {
  /** pi puts it back into the editor. */
  readonly selectedText: string | undefined;
  constructor(message: string, selectedText?: string) {
    super(message);
    this.name = "NothingToForkError";
    this.selectedText = selectedText;
  }
}

export interface ForkOptions {
  /** `auto` (default): before a user message, at any other entry — pi's `/fork` and `/clone`. */
  position?: ForkPosition | "auto";
  now?: Date;
}

export interface ForkPlan {
  /** Absolute, as pi's `parentSession` names it. */
  source: string;
  session: SessionFile;
  target: ForkTarget;
  /** Next to the source, pi's name. */
  file: string;
  header: ForkHeader;
  /** Root to the fork's leaf, label entries included (pi drops them). */
  path: readonly EntryRecord[];
  labels: ReadonlyMap<unknown, { label: unknown; timestamp: unknown }>;
  /** The path without its labels. */
  pathCount: number;
  /** The path's leaf, or the entry before a label the fork ends at. */
  pathLeafId: string;
  labelCount: number;
  /** pi's `selectedText`. */
  selectedText?: string;
  /** The source's permission bits (the same conversation: the same readers). */
  mode: number;
}

export interface ForkResult {
  file: string;
  source: string;
  sessionId: string;
  entryId: string;
  position: ForkPosition;
  /** Where pi resumes. */
  leafId: string;
  /** Before the re-created labels. */
  pathLeafId: string;
  pathCount: number;
  labelCount: number;
  bytes: number;
  selectedText?: string;
}

/** pi's `resolvePath` of the header `cwd`; undefined when missing or relative (pi would use its own cwd). */
export function headerCwd(cwd: string | undefined, home = os.homedir()): string | undefined {
  if (typeof cwd !== "string" || cwd === "") return undefined;
  let p = cwd;
  if (p === "~") p = home;
  else if (p.startsWith("~/") || (process.platform === "win32" && p.startsWith("~\\"))) p = path.join(home, p.slice(2));
  else if (/^file:\/\//.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch {
      return undefined;
    }
  }
  return path.isAbsolute(p) ? path.resolve(p) : undefined;
}

/**
 * Plan pi's fork of `file` at `entryId` (`null`: pi's `/clone`); writes nothing.
 * @throws {ForkSourceError} (no header, BOM, format < 3, no absolute `cwd`, a looping path),
 *   {@link ForkTargetError} (pi's words), {@link NothingToForkError}, the `fs` error.
 */
export async function planFork(file: string, entryId: string | null, options: ForkOptions = {}): Promise<ForkPlan> {
  const source = path.resolve(file);
  const session = await SessionFile.open(source);
  if (session.invalid || !session.header)
    throw new ForkSourceError(l10n.t("{0} is not a pi session (its first line is not a session header).", source));
  if (session.startsWithBom)
    throw new ForkSourceError(
      l10n.t("{0} starts with a UTF-8 byte order mark: pi 1.6.0 cannot open it as a session.", source),
    );
  if (!(session.fileVersion >= 3))
    throw new ForkSourceError(
      l10n.t(
        "{0} uses session format version {1}: pi rewrites such a file (new entry ids) when it opens it. Open the session in pi once, then fork it.",
        source,
        String(session.fileVersion),
      ),
    );
  const cwd = headerCwd(session.cwd);
  if (cwd === undefined)
    throw new ForkSourceError(
      l10n.t(
        "{0}: the header names no absolute working directory (cwd {1}); pi would fork it into the directory it runs in. Fork it in pi.",
        source,
        JSON.stringify(session.cwd ?? null),
      ),
    );
  let record;
  if (entryId === null) {
    const leaf = session.leafId;
    if (leaf === null) throw new ForkTargetError("Cannot clone session: no current entry selected");
    record = session.byId.get(leaf);
  } else record = session.byId.get(entryId);
  const target = forkTarget(record, entryId === null ? "at" : (options.position ?? "auto"));
  const selectedText = target.position === "before" && record ? forkMessageText(rawEntry(session, record)) : undefined;
  if (target.leafId === null)
    throw new NothingToForkError(
      l10n.t(
        "Nothing before this message: it is the first entry of the session. pi's /fork starts an empty session here and writes no file until a message is sent; start a new session in pi (/new) and send the message again.",
      ),
      selectedText,
    );
  if (!session.byId.has(target.leafId)) throw new ForkTargetError(`Entry ${target.leafId} not found`);
  const walk = getPath(session, target.leafId);
  if (walk.cycleAt !== undefined)
    throw new ForkSourceError(
      l10n.t(
        "The path from entry {0} to the root runs into a parent cycle at {1}: pi would never finish walking it. Run Pi Context: Check Session Health (pi-context doctor).",
        target.leafId,
        walk.cycleAt,
      ),
    );
  const labels = labelsOf(session.records.filter((r) => r.type === "label").map((r) => rawEntry(session, r)));
  if (!hasConversation(walk.path))
    throw new NothingToForkError(
      l10n.t(
        "The path up to entry {0} holds no message yet: pi keeps such a session in memory and writes no file until a message is sent.",
        target.leafId,
      ),
      selectedText,
    );
  const kept = walk.path.filter((r) => r.type !== "label");
  const keptIds = new Set(kept.map((r) => r.id));
  const now = options.now ?? new Date();
  const timestamp = now.toISOString();
  const sessionId = sessionIdV7(now.getTime());
  let mode = 0o600;
  try {
    mode = fs.statSync(source).mode & 0o666;
  } catch {
    // gone since it was read: the owner only
  }
  return {
    source,
    session,
    target,
    file: path.join(path.dirname(source), sessionFileName(timestamp, sessionId)),
    header: forkHeader(sessionId, timestamp, cwd, source),
    path: walk.path,
    labels,
    pathCount: kept.length,
    pathLeafId: kept[kept.length - 1]!.id,
    labelCount: [...labels.keys()].filter((id) => keptIds.has(id as string)).length,
    ...(selectedText !== undefined ? { selectedText } : {}),
    mode,
  };
}

/** pi's `branchedEntries`, each read when needed (a large path is never held at once). @throws {StaleSessionError} */
export function* forkEntries(plan: ForkPlan): Generator<RawEntry> {
  const { session } = plan;
  function* path(): Generator<RawEntry> {
    for (const r of plan.path) yield rawEntry(session, r);
  }
  yield* branchedEntries(path(), plan.labels, (taken) => newEntryId(taken));
}

function rawEntry(session: SessionFile, record: Parameters<SessionFile["readEntry"]>[0]): RawEntry {
  return session.readEntry(record) as unknown as RawEntry;
}

/** @throws {SessionWriteError}; nothing of the fork remains unless it says so. */
export async function writeFork(plan: ForkPlan): Promise<ForkResult> {
  let last: unknown;
  function* lines(): Generator<object> {
    yield plan.header;
    for (const e of forkEntries(plan)) {
      last = e.id;
      yield e;
    }
  }
  const bytes = await createSessionFile(plan.file, lines(), { mode: plan.mode });
  return {
    file: plan.file,
    source: plan.source,
    sessionId: plan.header.id,
    entryId: plan.target.entryId,
    position: plan.target.position,
    leafId: String(last),
    pathLeafId: plan.pathLeafId,
    pathCount: plan.pathCount,
    labelCount: plan.labelCount,
    bytes,
    ...(plan.selectedText !== undefined ? { selectedText: plan.selectedText } : {}),
  };
}

export async function forkSession(
  file: string,
  entryId: string | null,
  options: ForkOptions = {},
): Promise<ForkResult> {
  return writeFork(await planFork(file, entryId, options));
}

const WRITE_CHUNK_BYTES = 1 << 20;
/** ms of work before the event loop gets a turn. */
const SLICE_MS = 8;

/**
 * Create a session file of `lines` (pi's JSON lines) as they come: `O_CREAT | O_EXCL` (never touches
 * an existing file or link), `fsync`ed with its folder, recorded as our own write. A failure (or `lines`
 * throwing) removes the file when the path still names it. @returns bytes written.
 * @throws {SessionWriteError} (`restored` or `bytesLeft`); the error `lines` threw once the file is removed.
 */
export async function createSessionFile(
  file: string,
  lines: Iterable<object>,
  options: { mode?: number } = {},
): Promise<number> {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, options.mode ?? 0o600);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new SessionWriteError(
      e.code === "EEXIST"
        ? l10n.t("{0} already exists; it was left alone. Nothing was written.", file)
        : l10n.t("Could not create {0} ({1}). Nothing was written.", file, `${e.code ?? "error"}: ${e.message}`),
      { code: e.code, restored: true, bytesLeft: 0, offset: 0 },
    );
  }
  let written = 0;
  let failedIo: NodeJS.ErrnoException | undefined;
  try {
    let pending: string[] = [];
    let pendingLength = 0;
    const flush = () => {
      const data = Buffer.from(pending.join(""), "utf8");
      pending = [];
      pendingLength = 0;
      let done = 0;
      try {
        while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done);
      } catch (error) {
        failedIo = error as NodeJS.ErrnoException;
        throw error;
      } finally {
        written += done;
      }
    };
    let slice = performance.now();
    for (const line of lines) {
      const text = serializeEntryLine(line);
      pending.push(text);
      pendingLength += text.length;
      if (pendingLength >= WRITE_CHUNK_BYTES) flush();
      if (performance.now() - slice > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
    }
    if (pending.length) flush();
    try {
      await new Promise<void>((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
    } catch (error) {
      failedIo = error as NodeJS.ErrnoException;
      throw error;
    }
  } catch (error) {
    const removed = removeCreated(fd, file);
    if (!failedIo) {
      if (removed) throw error;
      throw new SessionWriteError(
        l10n.t("{0}, and removing the new file failed: delete {1} before pi opens it.", (error as Error).message, file),
        { code: undefined, restored: false, bytesLeft: written, offset: 0 },
      );
    }
    const e = failedIo;
    const what =
      e.syscall === "fsync"
        ? l10n.t("Syncing {0} to disk failed ({1})", file, `${e.code ?? "error"}: ${e.message}`)
        : l10n.t(
            "Writing {0} failed after {1} bytes ({2})",
            file,
            formatCount(written),
            `${e.code ?? "error"}: ${e.message}`,
          );
    throw new SessionWriteError(
      removed
        ? l10n.t("{0}. The new file was removed again. Nothing was written.", what)
        : l10n.t("{0}, and removing the new file failed: delete {1} before pi opens it.", what, file),
      { code: e.code, restored: removed, bytesLeft: removed ? 0 : written, offset: 0 },
    );
  }
  const stat = fs.fstatSync(fd);
  try {
    fs.closeSync(fd);
  } catch {
    // after a successful fsync the bytes are on disk
  }
  syncFolder(path.dirname(file));
  recordOwnWrite(file, stat, { created: true });
  return written;
}

function removeCreated(fd: number, file: string): boolean {
  let ours = false;
  try {
    const a = fs.fstatSync(fd);
    const b = fs.statSync(file);
    ours = a.dev === b.dev && a.ino === b.ino;
  } catch {
    ours = false;
  }
  try {
    fs.closeSync(fd);
  } catch {
    // closing a descriptor whose write failed: nothing more to do
  }
  if (!ours) return false;
  try {
    fs.unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Best effort (not possible on Windows). */
function syncFolder(dir: string): void {
  if (process.platform === "win32") return;
  try {
    const fd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // the file itself is synced; a folder that cannot be opened only weakens crash durability
  }
}
