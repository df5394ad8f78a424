/**
 * Gathers the facts {@link judgeAccess} decides from: the file's age and own-write state, its header,
 * the bridges' announcements, the process table, and the headers of sibling sessions for attribution.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import type { AttributableSession } from "../proc/attribute";
import { guardProcessesFromEnv } from "../proc/guardTable";
import { processSnapshot } from "../proc/table";
import type { ProcessSnapshot } from "../proc/types";
import { readHeader } from "../read/header";
import { claimsOf, judgeAccess, type AnnouncedPi, type PiClaim, type SessionAccess } from "./access";
import { isOwnLastWrite, ownWriteChecker } from "./ownWrites";

export interface AccessOptions {
  guardSeconds: number;
  /** Read from the file when not given. */
  header?: { cwd?: string | undefined; id?: string | undefined };
  announced?: () => readonly AnnouncedPi[] | Promise<readonly AnnouncedPi[]>;
  /**
   * `null`: do not look at processes; a string: a Linux proc root (tests). Default: the
   * `PI_CONTEXT_GUARD_PROCESSES` override when set, else the machine's table.
   */
  procRoot?: string | null;
  processes?: () => Promise<ProcessSnapshot>;
  ignorePids?: readonly number[];
  now?: number;
}

/** Realpath when the path exists, else resolved. */
export function canonicalPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Who has `file` open, from a fresh process table (`maxAgeMs: 0`).
 * @throws Error when `PI_CONTEXT_GUARD_PROCESSES` is unreadable (tests only).
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

/** Attributes bridgeless pis among the sessions next to `file` they could have started or written. */
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

/** `file` and every sibling `*.jsonl` modified since the earliest start of `pis` (all when one is unknown). */
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
  const own = ownWriteChecker();
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
    const mine = own(full, s) === "created";
    if (cached && cached.mtimeMs === s.mtimeMs && cached.size === s.size) {
      out.push(mine ? { ...cached.header, ours: true } : cached.header);
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
    out.push(mine ? { ...header, ours: true } : header);
  }
  return out;
}
