/**
 * Skipped lines the user called harmless (pi skips them at every open, so the warning never goes away
 * by itself). Kept outside the session, in the shared state folder (`access/ownWrites.ts` `stateDir`),
 * keyed by file identity (device + inode) and the line's offset, length and SHA-256: a changed line or
 * another file at the same path is not acknowledged. An unreadable state file acknowledges nothing.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { stateDir } from "../access/ownWrites";
import { fileStamp } from "../read/stamp";
import type { HealthFinding, HealthReport } from "./types";
import { reportOf } from "./types";
import * as l10n from "@vscode/l10n";

/** A skipped line as the doctor knows it (`HealthFinding.skippedLine`). */
export interface SkippedLine {
  offset: number;
  /** Bytes, without the `\n`. */
  bytes: number;
  /** Hex, of the line's bytes. */
  sha256: string;
}

interface Record_ extends SkippedLine {
  dev: number;
  ino: number;
  /** For people reading the state file. */
  file: string;
  at: string;
}

const MAX_RECORDS = 500;

function storeFile(): string {
  return path.join(stateDir(), "acknowledged-lines.json");
}

let cache: { stamp: string; records: Record_[] } | undefined;

/** Re-read when the state file changed (another window or the CLI). */
function records(): Record_[] {
  const file = storeFile();
  const stamp = `${file}|${fileStamp([file])}`;
  if (cache?.stamp === stamp) return cache.records;
  let list: Record_[] = [];
  try {
    const value = JSON.parse(fs.readFileSync(file, "utf8")) as unknown;
    if (Array.isArray(value)) list = value.filter(isRecord);
  } catch {
    // none
  }
  cache = { stamp, records: list };
  return list;
}

function isRecord(v: unknown): v is Record_ {
  const r = v as Record_;
  return (
    typeof r === "object" &&
    r !== null &&
    [r.dev, r.ino, r.offset, r.bytes].every(Number.isInteger) &&
    typeof r.sha256 === "string"
  );
}

/** Marks a skipped line as harmless; throws the `fs` error when the state file cannot be written. */
export function acknowledgeLine(file: string, identity: { dev: number; ino: number }, line: SkippedLine): void {
  const kept = records().filter((r) => !matches(r, identity, line));
  kept.unshift({ ...line, dev: identity.dev, ino: identity.ino, file, at: new Date().toISOString() });
  const dir = stateDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // a whole new file renamed over the old one: a reader never sees half of it
  const tmp = path.join(dir, `acknowledged-lines.${process.pid}.${Date.now()}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(kept.slice(0, MAX_RECORDS)), { mode: 0o600 });
  fs.renameSync(tmp, storeFile());
  cache = undefined;
  lastStamp = undefined;
}

function matches(r: Record_, identity: { dev: number; ino: number }, line: SkippedLine): boolean {
  return (
    r.dev === identity.dev &&
    r.ino === identity.ino &&
    r.offset === line.offset &&
    r.bytes === line.bytes &&
    r.sha256 === line.sha256
  );
}

export function isAcknowledged(identity: { dev: number; ino: number }, line: SkippedLine): boolean {
  return records().some((r) => matches(r, identity, line));
}

/** The report with the file's acknowledged skipped lines turned into `info` notes (`acknowledged: true`). */
export function withAcknowledged(
  report: HealthReport,
  identity: { dev: number; ino: number } | undefined,
): HealthReport {
  if (!identity || !report.findings.some((f) => f.skippedLine)) return report;
  let changed = false;
  const findings = report.findings.map((f): HealthFinding => {
    if (!f.skippedLine || f.acknowledged || !isAcknowledged(identity, f.skippedLine)) return f;
    changed = true;
    return {
      ...f,
      severity: "info",
      acknowledged: true,
      message: l10n.t("Acknowledged as harmless (stored outside the session, for this file): {0}", f.message),
    };
  });
  return changed ? reportOf(findings, report.leafId) : report;
}

/** How long (ms) {@link acknowledgedStamp} trusts its last look at the state file: asked on every report. */
const STAMP_TTL_MS = 1000;
let lastStamp: { at: number; stamp: string } | undefined;

/** Stamp of the acknowledged lines for report caches; refreshed at once after an acknowledgement here. */
export function acknowledgedStamp(now = Date.now()): string {
  if (lastStamp && now - lastStamp.at < STAMP_TTL_MS) return lastStamp.stamp;
  const file = storeFile();
  lastStamp = { at: now, stamp: `${file}|${fileStamp([file])}` };
  return lastStamp.stamp;
}
