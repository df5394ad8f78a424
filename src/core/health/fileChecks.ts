/**
 * File-level findings: the reading diagnostics (`read/diagnostics.ts`) with what pi 1.6.0 does
 * with each line, very large single entries, and sessions pi loads slowly.
 *
 * pi 1.6.0 behaviour cited: `loadEntriesFromFile` splits on `\n` and skips lines `JSON.parse`
 * rejects; a header with a UTF-8 BOM does not parse, so pi does not open the file as a session;
 * `SessionManager.open` appends a `\n` to a torn final line and migrates v1/v2 files by rewriting
 * them in place (shared case 08: 1610 → 1850 bytes, no backup); it parses every line at every open
 * (shared case 18: 128 MB in ≈ 0.75 s, peak memory ≈ 3.5 × the file size).
 */

import { editableRole } from "../rules/contextEdit";
import type { Projection } from "../rules/context";
import type { EntryRecord } from "../read/entries";
import type { Diagnostic } from "../types";
import { SKIPPED_CODES } from "./references";
import { entryRef, type HealthCode, type HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

/** An entry line at least this long (bytes) is reported as large. */
export const LARGE_ENTRY_BYTES = 1024 * 1024;
/** At most this many large entries are reported one by one (largest first). */
export const LARGE_ENTRY_LIMIT = 10;
/** A session file at least this long (bytes) is reported as slow for pi to open. */
export const SLOW_LOAD_BYTES = 64 * 1024 * 1024;

/** Codes handled by `references.ts` (structure) rather than here. */
const STRUCTURE_CODES = new Set([
  "missing-parent",
  "parent-cycle",
  "path-cycle",
  "several-roots",
  "concurrent-writers",
  "duplicate-id",
]);

/** What the file checks read. */
export interface FileInput {
  records: readonly EntryRecord[];
  diagnostics: readonly Diagnostic[];
  /** Size of the file in bytes. */
  fileBytes: number;
  projection: Projection;
  contextWindow: number | undefined;
  /** Thresholds (tests): {@link LARGE_ENTRY_BYTES}, {@link SLOW_LOAD_BYTES}. */
  largeEntryBytes?: number;
  slowLoadBytes?: number;
  /** The line pi makes its leaf although it is not an entry with a string id (reported by `leaf.ts`). */
  oddLeafLine?: number;
}

const mb = (bytes: number) => l10n.t("{0} MB", (bytes / 1024 / 1024).toFixed(1));

/** All file-level findings. */
export function fileFindings(input: FileInput): HealthFinding[] {
  const out: HealthFinding[] = [];
  const path = input.projection.path;
  const onPath = new Set(path.map((r) => r.id));
  // pi resumes before the first entry without message on the branch: a leaf marker on the entry before it
  const first = path.findIndex((r) => r.messageMissing);
  const before = first > 0 ? path[first - 1] : undefined;
  for (const d of input.diagnostics) {
    if (STRUCTURE_CODES.has(d.code)) continue;
    if (d.code === "missing-message") {
      const finding = messageMissingFinding(d, d.entryId !== undefined && onPath.has(d.entryId));
      if (before && d.entryId === path[first]!.id)
        finding.repair = {
          kind: "leaf-marker",
          targetId: before.id,
          description: l10n.t(
            "append a pi-context/leaf marker on {0}: pi resumes there, before the entry without message (the later entries stay in the file)",
            entryRef(before),
          ),
        };
      out.push(finding);
    } else if (d.code === "not-an-object" || d.code === "missing-id") {
      // the last one is pi's leaf: the leaf check (`leaf.ts`) reports it with its consequence
      if (d.line !== input.oddLeafLine) out.push(keptLineFinding(d));
    } else out.push(diagnosticFinding(d));
  }
  out.push(...largeEntryFindings(input));
  const slow = input.slowLoadBytes ?? SLOW_LOAD_BYTES;
  if (input.fileBytes >= slow)
    out.push({
      code: "slow-load",
      severity: "info",
      entryId: null,
      relatedIds: [],
      message: l10n.t(
        "The session file is {0} ({1} entries). pi 1.6.0 reads and parses every line at every open and keeps every entry in memory while it runs (a 128 MB session took about 0.75 s and 3.5 times its size in memory on a 2-core machine). What you can do: continue in a new session (pi's /new) once the old history is no longer needed.",
        mb(input.fileBytes),
        input.records.length,
      ),
      source: "session",
      repair: null,
    });
  return out;
}

/**
 * A message entry without message: pi 1.6.0 keeps it in its tree, and building a context from a
 * branch through it throws. On the current branch pi cannot open the session (error).
 */
function messageMissingFinding(d: Diagnostic, onPath: boolean): HealthFinding {
  return {
    code: "missing-message",
    severity: onPath ? "error" : "warning",
    entryId: d.entryId ?? null,
    relatedIds: [],
    source: "session",
    ...(d.line !== undefined && d.line > 0 ? { line: d.line } : {}),
    repair: null,
    message: onPath
      ? l10n.t(
          "{0}. It is on the current branch: pi cannot open this session (it throws reading message.role while it builds the context). Fix: move pi's leaf to the entry before it (a leaf marker, or Switch to Here; the entry stays in the file), or restore the line from a backup; pi-context never rewrites the file.",
          d.message.replace(/[.\s]+$/, ""),
        )
      : l10n.t(
          "{0}. It is not on the current branch, so pi opens the session; switching to a branch through it (pi's /tree, Switch to Here) makes pi fail. Only a person can restore the line from a backup; pi-context never rewrites the file.",
          d.message.replace(/[.\s]+$/, ""),
        ),
  };
}

/** A line without a string id that is not the last one: pi keeps it, but no branch can reach it. */
function keptLineFinding(d: Diagnostic): HealthFinding {
  return {
    code: d.code as HealthCode,
    severity: "warning",
    entryId: null,
    relatedIds: [],
    source: "session",
    ...(d.line !== undefined && d.line > 0 ? { line: d.line } : {}),
    repair: null,
    message: l10n.t(
      "{0}. pi keeps the line as an entry, but no other entry can name it as its parent (its id is not a string), so no branch pi builds reaches it; as the last line it would become pi's leaf. Only a person can fix it; pi-context never rewrites the file.",
      d.message.replace(/[.\s]+$/, "").replace(/; skipped$/, ""),
    ),
  };
}

function diagnosticFinding(d: Diagnostic): HealthFinding {
  const base = {
    entryId: d.entryId ?? null,
    relatedIds: d.relatedIds ?? [],
    source: "session" as const,
    ...(d.line !== undefined && d.line > 0 ? { line: d.line } : {}),
    repair: null,
    ...(d.lineSha256 !== undefined && d.lineBytes !== undefined && d.offset !== undefined
      ? { skippedLine: { offset: d.offset, bytes: d.lineBytes, sha256: d.lineSha256 } }
      : {}),
  };
  const msg = d.message.replace(/[.\s]+$/, "");
  if (SKIPPED_CODES.has(d.code))
    return {
      ...base,
      code: d.code as HealthCode,
      severity: "warning",
      message: l10n.t(
        "{0}. pi skips this line too: whatever it held is not part of the session for pi (entries whose parent was on it start a separate tree). Only a person can restore it from a backup; pi-context never rewrites the file.",
        msg,
      ),
    };
  switch (d.code) {
    case "bom":
      return {
        ...base,
        code: "bom",
        severity: "error",
        message: l10n.t(
          "The file starts with a UTF-8 byte order mark (EF BB BF): pi 1.6.0 cannot parse its header, so it does not open this file as a session. Fix: save the file as UTF-8 without BOM (remove its first 3 bytes) in an editor; pi-context never rewrites the file.",
        ),
      };
    case "not-a-session":
      return {
        ...base,
        code: "not-a-session",
        severity: "error",
        message: l10n.t("{0}: pi does not open it as a session either.", msg),
      };
    case "truncated-final-line":
      return {
        ...base,
        code: "truncated-final-line",
        severity: "warning",
        message: l10n.t(
          "{0}. pi skips the fragment; when it next opens the session it first appends a newline, so new entries start on their own line. pi-context appends nothing after an incomplete line: if pi is still writing, this clears itself; otherwise end it as pi does (Check Session Health → End the last line as pi does; pi-context doctor --end-line), then repair.",
          msg,
        ),
      };
    case "old-version":
      return {
        ...base,
        code: "old-version",
        severity: "warning",
        message: l10n.t(
          "{0} pi 1.6.0 rewrites this file in place when it opens it (new ids, version 3) and keeps no backup: copy the file first if you want to keep its bytes. pi-context reads it migrated in memory and writes nothing to it.",
          msg.replace(/ pi 1\.6\.0 rewrites.*$/, ""),
        ),
      };
    case "extra-header":
    case "unknown-type":
      return { ...base, code: d.code, severity: "info", message: `${msg}.` };
    default:
      return { ...base, code: "read-problem", severity: d.severity, message: `${msg}.` };
  }
}

function largeEntryFindings(input: FileInput): HealthFinding[] {
  const limit = input.largeEntryBytes ?? LARGE_ENTRY_BYTES;
  const large = input.records.filter((r) => r.byteLength >= limit).sort((a, b) => b.byteLength - a.byteLength);
  if (large.length === 0) return [];
  const inContext = new Map(input.projection.entries.map((e) => [e.record.id, e]));
  const out: HealthFinding[] = [];
  for (const r of large.slice(0, LARGE_ENTRY_LIMIT)) {
    const projected = inContext.get(r.id);
    const sent = projected !== undefined && projected.roles.length > 0 && projected.edit === undefined;
    const heavy = sent && input.contextWindow !== undefined && r.tokens >= input.contextWindow / 4;
    const what = r.images ? (r.images === 1 ? l10n.t(" (1 image)") : l10n.t(" ({0} images)", r.images)) : "";
    out.push({
      code: "large-entry",
      severity: heavy ? "warning" : "info",
      entryId: r.id,
      relatedIds: [],
      message: l10n.t(
        "{0} is {1} on one line{2}. pi parses it at every open and keeps it in memory{3}.",
        entryRef(r),
        mb(r.byteLength),
        what,
        sent
          ? l10n.t(
              "; it is in the context (≈{0} tokens by pi's estimate) and goes out with every request{1}",
              r.tokens.toLocaleString("en-US"),
              editableRole(r)
                ? l10n.t(". Removing it from the context with a context edit keeps it in the file but stops sending it")
                : "",
            )
          : "",
      ),
      source: "session",
      ...(r.line > 0 ? { line: r.line } : {}),
      repair: null,
    });
  }
  if (large.length > LARGE_ENTRY_LIMIT)
    out.push({
      code: "large-entry",
      severity: "info",
      entryId: null,
      relatedIds: large.slice(LARGE_ENTRY_LIMIT).map((r) => r.id),
      message: l10n.t("{0} more entries are over {1} each.", large.length - LARGE_ENTRY_LIMIT, mb(limit)),
      source: "session",
      repair: null,
    });
  return out;
}
