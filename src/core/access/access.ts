/**
 * Who has a session open: the one answer every surface and every write uses. pi 1.6.0 never re-reads
 * its open session, so a line appended meanwhile is ignored and pi's next entry branches off it.
 * - **certain**: a pi whose live bridge announces this session (one announcing another does not have it);
 * - **probable**: a bridgeless pi the process table attributes to it (`proc/attribute.ts`);
 * - **possible**: a pi in its folder whose session cannot be told, a pi whose folder cannot be read
 *   (Windows), or a write less than `guardSeconds` ago that is not our own (`ownWrites.ts`).
 */

import * as path from "node:path";
import { attributeSession, type AttributableSession, type Attribution } from "../proc/attribute";
import type { PiProcess, ProcessSnapshot } from "../proc/types";
import type { SessionInfo } from "../read/sessionInfo";

export type Strength = "certain" | "probable" | "possible";

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
      cwd?: string;
      /** `in-folder`: runs in the session's folder, session unknown; `unknown-cwd`: folder unreadable (Windows). */
      how: Attribution | "in-folder" | "unknown-cwd";
    }
  | { kind: "recent-write"; strength: "possible"; ageSeconds: number; guardSeconds: number };

export interface SessionAccess {
  file: string;
  /** Strongest first. */
  evidence: Evidence[];
  strength: Strength | "none";
  /** False: a pi without the bridge could run unseen. */
  processChecked: boolean;
  /** The last change is our own append, so its age is no evidence. */
  ownLastWrite: boolean;
}

export interface AnnouncedPi {
  pid: number;
  sessionFile: string;
  piVersion?: string;
}

export interface AccessInput {
  /** Canonical (realpath when it exists). */
  file: string;
  header: { cwd?: string | undefined; id?: string | undefined };
  /** Undefined when the file is missing. */
  ageSeconds: number | undefined;
  /** Seconds; 0 turns the time check off. */
  guardSeconds: number;
  ownLastWrite: boolean;
  announced: readonly AnnouncedPi[];
  /** Undefined when not looked at or unreadable. */
  snapshot: ProcessSnapshot | undefined;
  siblings: readonly AttributableSession[];
  ignorePids: readonly number[];
  /** Default: the table lists processes; a table given by a test counts even when empty. */
  processChecked?: boolean;
  canonical?: (p: string) => string;
}

const RANK: Record<Strength | "none", number> = { certain: 3, probable: 2, possible: 1, none: 0 };

export function atLeast(a: Strength | "none", b: Strength | "none"): boolean {
  return RANK[a] >= RANK[b];
}

export interface PiClaim {
  pi: PiProcess;
  file: string | undefined;
  how: "bridge" | Attribution | undefined;
  piVersion?: string;
}

/**
 * Which session each running pi holds: its bridge's announcement, else the table's attribution among
 * `siblings` (never a session a bridge announces). An announcement a readable table does not list is stale.
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
    const found = attributeSession(pi, others, input.siblings, claimed, snapshot?.at);
    claims.push({ pi, file: found ? canonical(found.file) : undefined, how: found?.how });
  }
  // no table, or a launcher the pi rule does not know: the announcement stands unless a readable table lacks it
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

/** Who has the session open (rules in the file comment); the evidence strongest first. */
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
    // a pi naming another session by id or path has that one
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

function namesOther(pi: PiProcess, id: string | undefined): boolean {
  const arg = pi.sessionArg!;
  if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl")) return true;
  return id !== undefined && !id.startsWith(arg);
}

/** Certain evidence always blocks a write; probable and possible evidence unless `force`. */
export function blocksWrite(access: Pick<SessionAccess, "strength">, force = false): boolean {
  return access.strength === "certain" || (!force && access.strength !== "none");
}

/** Someone has the session open for "N live": a certain or probable pi, or (no table) a recent write. */
export function countsAsLive(access: SessionAccess): boolean {
  return atLeast(access.strength, "probable") || (!access.processChecked && access.strength !== "none");
}

/** ms; a write this recent counts as live when the process table cannot be read. */
export const LIVE_WRITE_WINDOW_MS = 60_000;

export function listedSession(
  info: Pick<SessionInfo, "file" | "cwd" | "id" | "created" | "mtimeMs">,
  own?: "created" | "appended",
): ListedSession {
  const created = info.created !== undefined ? Date.parse(info.created) : NaN;
  return {
    file: info.file,
    cwd: info.cwd,
    id: info.id,
    mtimeMs: info.mtimeMs,
    ...(Number.isFinite(created) ? { created } : {}),
    ...ownMarks(own),
  };
}

/** What our own write to a listed session means for its access (`ownWrites.ts` `ownWriteChecker`). */
export function ownMarks(own: "created" | "appended" | undefined): { ours?: true; ownLastWrite?: true } {
  return own === "created" ? { ours: true, ownLastWrite: true } : own ? { ownLastWrite: true } : {};
}

/** A session of a listing; `ownLastWrite`: its last write was pi-context's (no one else's recent write). */
export type ListedSession = AttributableSession & { id?: string | undefined; ownLastWrite?: boolean };

/** The sessions someone has open ({@link countsAsLive}) — "N live" and Select Session's marks; pure. */
export function liveAmong(
  sessions: readonly ListedSession[],
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
        ownLastWrite: s.ownLastWrite === true,
        siblings: sessions,
        ...facts,
      },
      claims,
    );
    if (countsAsLive(access)) out.set(s.file, access);
  }
  return out;
}
