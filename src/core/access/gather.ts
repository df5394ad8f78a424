/**
 * The facts {@link judgeAccess} decides from, gathered for one session file: its age and whether
 * the last change was ours (`ownWrites.ts`), its header, the live bridges' announcements (given by
 * the caller: the extension's live bridge service or the CLI's reader of pi's live folder), the
 * process table (the machine's, or the one a test runner injects through
 * `PI_CONTEXT_GUARD_PROCESSES`, `proc/guardTable.ts`) and, for the table's attribution, the headers
 * of the sessions in the same folder that a running pi could have started or written.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import type { AttributableSession } from "../proc/attribute";
import { guardProcessesFromEnv } from "../proc/guardTable";
import { processSnapshot } from "../proc/table";
import type { ProcessSnapshot } from "../proc/types";
import { readHeader } from "../read/header";
import { claimsOf, judgeAccess, type AnnouncedPi, type PiClaim, type SessionAccess } from "./access";
import { isOwnLastWrite } from "./ownWrites";

/** Where the access facts come from; every field is optional (tests and the CLI pass what they have). */
export interface AccessOptions {
  /** Seconds since the last change below which a change by someone else is evidence (0 = no time check). */
  guardSeconds: number;
  /** The session header's `cwd` and `id` when the caller read them (else the header is read). */
  header?: { cwd?: string | undefined; id?: string | undefined };
  /** The live bridges' announcements (alive pis); none when not given. */
  announced?: () => readonly AnnouncedPi[] | Promise<readonly AnnouncedPi[]>;
  /**
   * `null`: do not look at processes. A string: a Linux proc root to read (tests). Default: the pi
   * processes of `PI_CONTEXT_GUARD_PROCESSES` when set (test runners), else the machine's table.
   */
  procRoot?: string | null;
  /** The process table to use (tests: recorded macOS / Windows output). */
  processes?: () => Promise<ProcessSnapshot>;
  /** Processes that are pi-context itself (default: this process). */
  ignorePids?: readonly number[];
  /** Current time in ms (tests). */
  now?: number;
}

/** A path's canonical form: its realpath when it exists, else resolved. */
export function canonicalPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Who has `file` open (see `access.ts`). Reads the file's stat and header, the announcements, the
 * process table (fresh: `maxAgeMs: 0`) and, when a pi without the bridge runs, the headers of the
 * sessions next to the file.
 * @throws Error when `PI_CONTEXT_GUARD_PROCESSES` is set to something unreadable (tests only).
 */
export async function sessionAccess(file: string, options: AccessOptions): Promise<SessionAccess> {
  const canonical = canonicalPath(file);
  const now = options.now ?? Date.now();
  let ageSeconds: number | undefined;
  let ownLastWrite = false;
  try {
    const s = await fs.promises.stat(canonical);
    ageSeconds = Math.max(0, (now - s.mtimeMs) / 1000);
    ownLastWrite = isOwnLastWrite(canonical, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
  } catch {
    // a missing file: the write path reports it
  }
  const header = options.header ?? (await headerOf(canonical));
  const facts = await processFacts(options);
  const claims = await claimsNear(canonical, facts, options.ignorePids ?? [process.pid]);
  return judgeAccess(
    {
      file: canonical,
      header,
      ageSeconds,
      guardSeconds: options.guardSeconds,
      ownLastWrite,
      announced: facts.announced,
      snapshot: facts.snapshot,
      siblings: [],
      ignorePids: options.ignorePids ?? [process.pid],
      canonical: canonicalPath,
      ...(facts.processChecked !== undefined ? { processChecked: facts.processChecked } : {}),
    },
    claims,
  );
}

/** The announcements and the process table, as {@link AccessOptions} says where from. */
export async function processFacts(
  options: Pick<AccessOptions, "announced" | "procRoot" | "processes" | "ignorePids">,
): Promise<{ announced: AnnouncedPi[]; snapshot: ProcessSnapshot | undefined; processChecked?: boolean }> {
  const announced = (options.announced ? await options.announced() : []).map((a) => ({
    ...a,
    sessionFile: canonicalPath(a.sessionFile),
  }));
  if (options.procRoot === null) return { announced, snapshot: undefined, processChecked: false };
  const ignorePids = options.ignorePids ?? [process.pid];
  if (options.processes) return { announced, snapshot: await options.processes(), processChecked: true };
  if (options.procRoot !== undefined)
    return {
      announced,
      snapshot: await processSnapshot({ maxAgeMs: 0, ignorePids, procRoot: options.procRoot, platform: "linux" }),
    };
  const fromEnv = await guardProcessesFromEnv();
  if (fromEnv) return { announced, snapshot: fromEnv, processChecked: true };
  return { announced, snapshot: await processSnapshot({ maxAgeMs: 0, ignorePids }) };
}

/**
 * Each running pi's claim (`claimsOf`), attributing the pis without a bridge among the sessions next
 * to `file` that they could have started or written (modified since the earliest of their starts).
 */
async function claimsNear(
  file: string,
  facts: { announced: AnnouncedPi[]; snapshot: ProcessSnapshot | undefined },
  ignorePids: readonly number[],
): Promise<PiClaim[]> {
  const announcedPids = new Set(facts.announced.map((a) => a.pid));
  const unannounced = (facts.snapshot?.pi ?? []).filter(
    (p) => !announcedPids.has(p.pid) && !ignorePids.includes(p.pid),
  );
  const siblings = unannounced.length > 0 ? await siblingSessions(file, unannounced) : [];
  return claimsOf({
    guardSeconds: 0,
    announced: facts.announced,
    snapshot: facts.snapshot,
    siblings,
    ignorePids,
    canonical: canonicalPath,
  });
}

const headerCache = new Map<string, { mtimeMs: number; size: number; header: AttributableSession }>();

async function headerOf(file: string): Promise<{ cwd?: string; id?: string }> {
  const h = await readHeader(file).catch(() => undefined);
  return { ...(h?.cwd ? { cwd: h.cwd } : {}), ...(h?.id ? { id: h.id } : {}) };
}

/**
 * The sessions in `file`'s folder a pi of `pis` could have started or written: `file` itself and
 * every `*.jsonl` modified since the earliest start among them (all of them when a start is unknown).
 * Headers are cached by path, mtime and size.
 */
async function siblingSessions(
  file: string,
  pis: readonly { startedAt?: number | undefined }[],
): Promise<AttributableSession[]> {
  const starts = pis.map((p) => p.startedAt);
  const since = starts.some((s) => s === undefined) ? -Infinity : Math.min(...(starts as number[])) - 1000;
  const dir = path.dirname(file);
  let names: string[];
  try {
    names = (await fs.promises.readdir(dir)).filter((n) => n.endsWith(".jsonl"));
  } catch {
    names = [];
  }
  const out: AttributableSession[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    let s: fs.Stats;
    try {
      s = await fs.promises.stat(full);
    } catch {
      continue;
    }
    if (!s.isFile() || (s.mtimeMs < since && full !== file)) continue;
    const cached = headerCache.get(full);
    if (cached && cached.mtimeMs === s.mtimeMs && cached.size === s.size) {
      out.push(cached.header);
      continue;
    }
    const h = await readHeader(full).catch(() => undefined);
    if (h?.state !== "session") continue;
    const header: AttributableSession = {
      file: full,
      cwd: h.cwd,
      id: h.id,
      created: h.created,
      mtimeMs: s.mtimeMs,
    };
    headerCache.set(full, { mtimeMs: s.mtimeMs, size: s.size, header });
    out.push(header);
  }
  return out;
}
