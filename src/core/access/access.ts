/**
 * Who has a session open: the one answer every surface and every write uses (the gauge's "N live",
 * the tree, the panel, Select Session, each action's route, each flow's last check before it
 * appends).
 *
 * pi 1.6.0 keeps a running session in memory and never re-reads its file: a line appended while a
 * pi has the session open is ignored by that pi, and its next entry branches off it. So before a
 * write we ask who may hold the session, and how sure we are:
 * - **certain**: a pi whose live bridge announces this session. A pi whose bridge announces
 *   *another* session does not have this one — whatever the process table suggests.
 * - **probable**: a pi without the bridge that the process table attributes to this session
 *   (`--session`, a session it started, or one it wrote since it started: `proc/attribute.ts`).
 * - **possible**: a pi in the session's folder whose session cannot be told (it may have resumed
 *   this one with `pi -c` or `/resume`), a pi whose folder cannot be read (Windows), or a write
 *   less than `guardSeconds` ago by someone other than pi-context (our own last write, in this
 *   process or an earlier CLI run, does not count: `ownWrites.ts`).
 * - **none**: nobody.
 * The judgement is pure ({@link judgeAccess}); `gather.ts` collects its inputs from the disk, the
 * process table and the bridge announcements.
 */

import * as path from "node:path";
import { attributeSession, type AttributableSession, type Attribution } from "../proc/attribute";
import type { PiProcess, ProcessSnapshot } from "../proc/types";
import type { SessionInfo } from "../read/sessionInfo";

/** How sure an evidence is, strongest first. */
export type Strength = "certain" | "probable" | "possible";

/** One reason to think someone has the session open. */
export type Evidence =
  | {
      kind: "bridge";
      strength: "certain";
      pid: number;
      piVersion?: string;
    }
  | {
      kind: "process";
      strength: "probable" | "possible";
      pid: number;
      command: string;
      argv?: string[];
      /** Its working directory, when the platform tells it. */
      cwd?: string;
      /**
       * How it was tied to the session: `session-argument` / `started-here` / `written-since-start`
       * (probable, `proc/attribute.ts`); `in-folder` (it runs in the session's folder and its session
       * is unknown); `unknown-cwd` (Windows: its folder cannot be read).
       */
      how: Attribution | "in-folder" | "unknown-cwd";
    }
  | { kind: "recent-write"; strength: "possible"; ageSeconds: number; guardSeconds: number };

/** Who has a session open, with the evidence. */
export interface SessionAccess {
  /** The session file (absolute). */
  file: string;
  /** Every evidence found, strongest first. */
  evidence: Evidence[];
  /** The strongest evidence's strength; `none` when there is none. */
  strength: Strength | "none";
  /** True when the process table was read (false: a pi without the bridge could run unseen). */
  processChecked: boolean;
  /** True when the file's last change is pi-context's own append (so its age is no evidence). */
  ownLastWrite: boolean;
}

/** A running pi whose live bridge announces a session (checked to be alive). */
export interface AnnouncedPi {
  pid: number;
  sessionFile: string;
  piVersion?: string;
}

/** What {@link judgeAccess} decides from. */
export interface AccessInput {
  /** The session file, canonical (realpath when it exists). */
  file: string;
  /** The session header's `cwd` and `id`. */
  header: { cwd?: string | undefined; id?: string | undefined };
  /** Seconds since the file's last change; undefined when it is missing. */
  ageSeconds: number | undefined;
  /** A change younger than this (s) is evidence; 0 turns the time check off. */
  guardSeconds: number;
  /** The file's last change is ours. */
  ownLastWrite: boolean;
  /** The live bridges' announcements (their session files canonical). */
  announced: readonly AnnouncedPi[];
  /** The process table; undefined when it was not looked at or could not be read. */
  snapshot: ProcessSnapshot | undefined;
  /** The sessions of the same folders (canonical files), for the process table's attribution. */
  siblings: readonly AttributableSession[];
  /** Processes that are pi-context itself. */
  ignorePids: readonly number[];
  /** Whether the table was looked at (default: it lists processes; a table given by a test counts even when empty). */
  processChecked?: boolean;
  /** Canonical form of a path (realpath); default `path.resolve`. */
  canonical?: (p: string) => string;
}

const RANK: Record<Strength | "none", number> = { certain: 3, probable: 2, possible: 1, none: 0 };

/** True when `a` is at least as strong as `b`. */
export function atLeast(a: Strength | "none", b: Strength | "none"): boolean {
  return RANK[a] >= RANK[b];
}

/** Each pi process's claim: the session its bridge announces, or the one the process table attributes. */
export interface PiClaim {
  pi: PiProcess;
  /** The announced (bridge) or attributed session, canonical; undefined when unknown. */
  file: string | undefined;
  how: "bridge" | Attribution | undefined;
  piVersion?: string;
}

/**
 * Which session each running pi holds: its bridge's announcement (exact), else the process table's
 * attribution among `siblings` (never a session a bridge announces). An announcement whose process
 * a readable table does not list is stale and left out.
 */
export function claimsOf(input: Omit<AccessInput, "file" | "header" | "ageSeconds" | "ownLastWrite">): PiClaim[] {
  const canonical = input.canonical ?? path.resolve;
  const snapshot = input.snapshot;
  const byPid = new Map(input.announced.map((a) => [a.pid, a]));
  const claims: PiClaim[] = [];
  const seen = new Set<number>();
  const pis = (snapshot?.pi ?? []).filter((p) => !input.ignorePids.includes(p.pid));
  const claimed = new Set(input.announced.map((a) => canonical(a.sessionFile)));
  for (const pi of pis) {
    seen.add(pi.pid);
    const a = byPid.get(pi.pid);
    if (a) {
      claims.push({
        pi,
        file: canonical(a.sessionFile),
        how: "bridge",
        ...(a.piVersion ? { piVersion: a.piVersion } : {}),
      });
      continue;
    }
    const others = pis.filter((o) => o.pid !== pi.pid && !byPid.has(o.pid));
    const found = attributeSession(pi, others, input.siblings, claimed);
    claims.push({ pi, file: found ? canonical(found.file) : undefined, how: found?.how });
  }
  // an announcing pi the table does not show as pi (no table, a launcher the pi rule does not
  // know): the announcement stands, unless a readable table lacks its process (it is gone)
  const listed = new Set((snapshot?.processes ?? []).map((p) => p.pid));
  for (const a of input.announced) {
    if (seen.has(a.pid) || input.ignorePids.includes(a.pid)) continue;
    if (listed.size > 0 && !listed.has(a.pid)) continue;
    claims.push({
      pi: { pid: a.pid, ppid: 0, argv: ["pi"], command: "pi" },
      file: canonical(a.sessionFile),
      how: "bridge",
      ...(a.piVersion ? { piVersion: a.piVersion } : {}),
    });
  }
  return claims;
}

/**
 * Who has the session open (see the file comment for the rules), from already gathered facts.
 * @returns the evidence strongest first, and the strongest strength.
 */
export function judgeAccess(input: AccessInput, claims: readonly PiClaim[] = claimsOf(input)): SessionAccess {
  const canonical = input.canonical ?? path.resolve;
  const file = input.file;
  const cwd = input.header.cwd ? canonical(input.header.cwd) : undefined;
  const evidence: Evidence[] = [];
  for (const c of claims) {
    const { pi } = c;
    if (c.how === "bridge") {
      if (c.file === file)
        evidence.push({
          kind: "bridge",
          strength: "certain",
          pid: pi.pid,
          ...(c.piVersion ? { piVersion: c.piVersion } : {}),
        });
      continue;
    }
    const base = {
      kind: "process" as const,
      pid: pi.pid,
      command: pi.command,
      ...(pi.argv.length ? { argv: pi.argv } : {}),
      ...(pi.cwd !== undefined ? { cwd: pi.cwd } : {}),
    };
    if (c.file !== undefined) {
      if (c.file === file) evidence.push({ ...base, strength: "probable", how: c.how as Attribution });
      continue;
    }
    // its session cannot be told: a pi naming another session by id or path has that one
    if (pi.sessionArg !== undefined) {
      if (!namesOther(pi, input.header.id)) evidence.push({ ...base, strength: "possible", how: "in-folder" });
      continue;
    }
    if (pi.cwd === undefined) evidence.push({ ...base, strength: "possible", how: "unknown-cwd" });
    else if (cwd !== undefined && canonical(pi.cwd) === cwd)
      evidence.push({ ...base, strength: "possible", how: "in-folder" });
  }
  if (
    input.guardSeconds > 0 &&
    input.ageSeconds !== undefined &&
    !input.ownLastWrite &&
    input.ageSeconds < input.guardSeconds
  )
    evidence.push({
      kind: "recent-write",
      strength: "possible",
      ageSeconds: input.ageSeconds,
      guardSeconds: input.guardSeconds,
    });
  evidence.sort((a, b) => RANK[b.strength] - RANK[a.strength]);
  return {
    file,
    evidence,
    strength: evidence[0]?.strength ?? "none",
    processChecked: input.processChecked ?? (input.snapshot !== undefined && input.snapshot.processes.length > 0),
    ownLastWrite: input.ownLastWrite,
  };
}

/** A `--session <id prefix>` that is not this session's id (a path argument was attributed already). */
function namesOther(pi: PiProcess, id: string | undefined): boolean {
  const arg = pi.sessionArg!;
  if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl")) return true;
  return id !== undefined && !id.startsWith(arg);
}

/**
 * Does the access stop a write? Certain evidence always does; probable and possible evidence do
 * unless the user went ahead anyway (`force`).
 */
export function blocksWrite(access: Pick<SessionAccess, "strength">, force = false): boolean {
  return access.strength === "certain" || (!force && access.strength !== "none");
}

/** The pi whose live bridge has the session open, if any. */
export function bridgeHolder(access: Pick<SessionAccess, "evidence">): { pid: number; piVersion?: string } | undefined {
  const e = access.evidence.find((x) => x.kind === "bridge");
  return e ? { pid: e.pid, ...(e.piVersion ? { piVersion: e.piVersion } : {}) } : undefined;
}

/** True when someone has the session open for the "N live" count: a pi that is certain or probable, or (no process table) a recent write. */
export function countsAsLive(access: SessionAccess): boolean {
  return atLeast(access.strength, "probable") || (!access.processChecked && access.strength !== "none");
}

/** A session write counts as someone's for the "N live" count when the process table cannot be read (ms). */
export const LIVE_WRITE_WINDOW_MS = 60_000;

/** A listed session as {@link liveAmong} takes it (the header time in ms). */
export function listedSession(
  info: Pick<SessionInfo, "file" | "cwd" | "id" | "created" | "mtimeMs">,
): AttributableSession & { id?: string | undefined } {
  const created = info.created !== undefined ? Date.parse(info.created) : NaN;
  return {
    file: info.file,
    cwd: info.cwd,
    id: info.id,
    mtimeMs: info.mtimeMs,
    ...(Number.isFinite(created) ? { created } : {}),
  };
}

/**
 * The sessions among `sessions` that someone has open ({@link countsAsLive}), from one process
 * table and the bridges' announcements: the gauge's "N live" and Select Session's live marks.
 * Pure; the sessions are the attribution's candidates too (no disk reads).
 */
export function liveAmong(
  sessions: readonly (AttributableSession & { id?: string | undefined })[],
  facts: {
    announced: readonly AnnouncedPi[];
    snapshot: ProcessSnapshot | undefined;
    ignorePids: readonly number[];
    processChecked?: boolean;
  },
  now: number,
): Map<string, SessionAccess> {
  const claims = claimsOf({ guardSeconds: 0, siblings: sessions, ...facts });
  const out = new Map<string, SessionAccess>();
  for (const s of sessions) {
    const access = judgeAccess(
      {
        file: path.resolve(s.file),
        header: { cwd: s.cwd, id: s.id },
        ageSeconds: Math.max(0, (now - s.mtimeMs) / 1000),
        guardSeconds: LIVE_WRITE_WINDOW_MS / 1000,
        ownLastWrite: false,
        siblings: sessions,
        ...facts,
      },
      claims,
    );
    if (countsAsLive(access)) out.set(s.file, access);
  }
  return out;
}
