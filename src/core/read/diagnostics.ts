/** One {@link Diagnostic} per line pi skips or reads differently (1-based lines, bytes); pi reports none. */

import { CURRENT_SESSION_VERSION, type Diagnostic } from "../types";
import * as l10n from "@vscode/l10n";

/** The file starts with a UTF-8 BOM: read here, but pi cannot parse such a header. */
export function bomDiagnostic(): Diagnostic {
  return {
    severity: "warning",
    code: "bom",
    message: l10n.t(
      "The file starts with a UTF-8 byte order mark; pi 1.6.0 cannot parse its header and will not open it.",
    ),
    line: 1,
    offset: 0,
  };
}

/** A line too long to hold as a string: skipped. */
export function lineTooLong(line: number, byteLength: number, offset: number): Diagnostic {
  return {
    severity: "error",
    code: "line-too-long",
    message: l10n.t("line {0} is {1} bytes; skipped", line, byteLength),
    line,
    offset,
  };
}

/** `truncated-final-line` for an unterminated final line (pi is likely writing it), else `malformed-line`. */
export function unparseableLine(
  line: number,
  byteLength: number,
  offset: number,
  reason: string,
  terminated: boolean,
): Diagnostic {
  if (!terminated) {
    return {
      severity: "warning",
      code: "truncated-final-line",
      message: l10n.t("truncated final record at line {0} ({1} bytes): {2}", line, byteLength, reason),
      line,
      offset,
    };
  }
  return {
    severity: "warning",
    code: "malformed-line",
    message: l10n.t("unparseable line {0} ({1} bytes): {2}", line, byteLength, reason),
    line,
    offset,
  };
}

/** A line whose JSON is falsy (`null`, `0`, `false`, `""`): pi skips it. */
export function notAnEntry(line: number, value: unknown, offset: number): Diagnostic {
  return {
    severity: "warning",
    code: "not-an-entry",
    message: l10n.t("line {0} is not an entry ({1})", line, JSON.stringify(value)),
    line,
    offset,
  };
}

/** A header older than the current format: migrated in memory (pi rewrites the file when it opens it). */
export function oldVersion(line: number, fileVersion: number): Diagnostic {
  return {
    severity: "info",
    code: "old-version",
    message: l10n.t(
      "session format version {0}: migrated to version {1} in memory only. pi 1.6.0 rewrites this file when it opens it; pi-context will not write to it.",
      fileVersion,
      CURRENT_SESSION_VERSION,
    ),
    line,
  };
}

/** The first parsed line is not a session header: not a pi session, nothing else is read. */
export function notASession(line: number, offset: number): Diagnostic {
  return {
    severity: "error",
    code: "not-a-session",
    message: l10n.t("not a pi session: the first entry (line {0}) is not a session header", line),
    line,
    offset,
  };
}

/** A later `session` line: ignored, as pi does. */
export function extraHeader(line: number, offset: number): Diagnostic {
  return {
    severity: "info",
    code: "extra-header",
    message: l10n.t("line {0} is a second session header; ignored (as pi does)", line),
    line,
    offset,
  };
}

/** A header whose `version` is not a number: pi compares it with numbers as JavaScript does. */
export function versionNotANumber(line: number, version: unknown, asRead: number): Diagnostic {
  const reading = Number.isNaN(asRead)
    ? l10n.t("no migration applies (pi 1.6.0 still rewrites the file when it opens it)")
    : l10n.t("read as version {0}, as pi 1.6.0 reads it", asRead);
  return {
    severity: "warning",
    code: "version-not-a-number",
    message: l10n.t("the header's version is {0}, not a number: {1}", JSON.stringify(version), reading),
    line,
  };
}

/** A `message` entry whose `message` is not an object: pi keeps it, without role and tokens. */
export function messageNotAnObject(line: number, offset: number, entryId: string, message: unknown): Diagnostic {
  return {
    severity: "warning",
    code: "message-not-an-object",
    message: l10n.t(
      "line {0}: entry {1} has message {2}, not an object; kept in the tree without a role, as pi 1.6.0 keeps it (0 tokens)",
      line,
      entryId,
      JSON.stringify(message)?.slice(0, 40) ?? "?",
    ),
    line,
    offset,
    entryId,
  };
}

/** Kept in the tree as pi 1.6.0 does; pi cannot build a context from a branch through it. */
export function messageMissing(line: number, offset: number, entryId: string, message: unknown): Diagnostic {
  return {
    severity: "warning",
    code: "missing-message",
    message: l10n.t(
      "line {0}: message entry {1} has message {2}; kept in the tree, as pi 1.6.0 keeps it, but pi cannot build a context from a branch through it (it reads message.role)",
      line,
      entryId,
      String(message),
    ),
    line,
    offset,
    entryId,
  };
}

/** An entry `buildRecord` refused (`code`, `message` from it): skipped. */
export function skippedEntry(line: number, offset: number, code: string, message: string): Diagnostic {
  return { severity: "warning", code, message: l10n.t("line {0}: {1}; skipped", line, message), line, offset };
}

/** An entry type pi 1.6.0 does not know: kept in the tree, contributes nothing to the context. */
export function unknownType(line: number, offset: number, type: string, entryId: string): Diagnostic {
  return {
    severity: "info",
    code: "unknown-type",
    message: l10n.t(
      "line {0}: unknown entry type {1} (kept in the tree, contributes nothing to the context)",
      line,
      JSON.stringify(type),
    ),
    line,
    offset,
    entryId,
  };
}

/** An id already used by an earlier entry: the later entry wins (pi's `byId` map). */
export function duplicateId(line: number, offset: number, entryId: string, previousLine: number): Diagnostic {
  return {
    severity: "warning",
    code: "duplicate-id",
    message: l10n.t(
      "line {0}: entry id {1} already used at line {2}; the later entry wins (as in pi)",
      line,
      entryId,
      previousLine,
    ),
    line,
    offset,
    entryId,
  };
}
