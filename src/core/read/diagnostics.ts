/**
 * The diagnostics of reading a session file: one {@link Diagnostic} per line pi skips or reads
 * differently (line numbers are 1-based, offsets and sizes in bytes). pi reports none of these;
 * each function names the rule its line follows.
 */

import { CURRENT_SESSION_VERSION, type Diagnostic } from "../types";

/** The file starts with a UTF-8 BOM: read here, but pi cannot parse such a header. */
export function bomDiagnostic(): Diagnostic {
  return {
    severity: "warning",
    code: "bom",
    message: "The file starts with a UTF-8 byte order mark; pi 1.6.0 cannot parse its header and will not open it.",
    line: 1,
    offset: 0,
  };
}

/** A line too long to hold as a string: skipped. */
export function lineTooLong(line: number, byteLength: number, offset: number): Diagnostic {
  return {
    severity: "error",
    code: "line-too-long",
    message: `line ${line} is ${byteLength} bytes; skipped`,
    line,
    offset,
  };
}

/**
 * A line `JSON.parse` rejects (pi skips it): `truncated-final-line` for an unterminated final line
 * (pi is likely still writing it), else `malformed-line`.
 */
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
      message: `truncated final record at line ${line} (${byteLength} bytes): ${reason}`,
      line,
      offset,
    };
  }
  return {
    severity: "warning",
    code: "malformed-line",
    message: `unparseable line ${line} (${byteLength} bytes): ${reason}`,
    line,
    offset,
  };
}

/** A line whose JSON is falsy (`null`, `0`, `false`, `""`): pi skips it. */
export function notAnEntry(line: number, value: unknown, offset: number): Diagnostic {
  return {
    severity: "warning",
    code: "not-an-entry",
    message: `line ${line} is not an entry (${JSON.stringify(value)})`,
    line,
    offset,
  };
}

/** A header older than the current format: migrated in memory (pi rewrites the file when it opens it). */
export function oldVersion(line: number, fileVersion: number): Diagnostic {
  return {
    severity: "info",
    code: "old-version",
    message: `session format version ${fileVersion}: migrated to version ${CURRENT_SESSION_VERSION} in memory only. pi 1.6.0 rewrites this file when it opens it; pi-context will not write to it.`,
    line,
  };
}

/** The first parsed line is not a session header: not a pi session, nothing else is read. */
export function notASession(line: number, offset: number): Diagnostic {
  return {
    severity: "error",
    code: "not-a-session",
    message: `not a pi session: the first entry (line ${line}) is not a session header`,
    line,
    offset,
  };
}

/** A later `session` line: ignored, as pi does. */
export function extraHeader(line: number, offset: number): Diagnostic {
  return {
    severity: "info",
    code: "extra-header",
    message: `line ${line} is a second session header; ignored (as pi does)`,
    line,
    offset,
  };
}

/** A header whose `version` is not a number: pi compares it with numbers as JavaScript does. */
export function versionNotANumber(line: number, version: unknown, asRead: number): Diagnostic {
  const reading = Number.isNaN(asRead)
    ? "no migration applies (pi 1.6.0 still rewrites the file when it opens it)"
    : `read as version ${asRead}, as pi 1.6.0 reads it`;
  return {
    severity: "warning",
    code: "version-not-a-number",
    message: `the header's version is ${JSON.stringify(version)}, not a number: ${reading}`,
    line,
  };
}

/** A `message` entry whose `message` is not an object: pi keeps it, without role and tokens. */
export function messageNotAnObject(line: number, offset: number, entryId: string, message: unknown): Diagnostic {
  return {
    severity: "warning",
    code: "message-not-an-object",
    message: `line ${line}: entry ${entryId} has message ${JSON.stringify(message)?.slice(0, 40) ?? "?"}, not an object; kept in the tree without a role, as pi 1.6.0 keeps it (0 tokens)`,
    line,
    offset,
    entryId,
  };
}

/** An entry `buildRecord` refused (`code`, `message` from it): skipped. */
export function skippedEntry(line: number, offset: number, code: string, message: string): Diagnostic {
  return { severity: "warning", code, message: `line ${line}: ${message}; skipped`, line, offset };
}

/** An entry type pi 1.6.0 does not know: kept in the tree, contributes nothing to the context. */
export function unknownType(line: number, offset: number, type: string, entryId: string): Diagnostic {
  return {
    severity: "info",
    code: "unknown-type",
    message: `line ${line}: unknown entry type ${JSON.stringify(type)} (kept in the tree, contributes nothing to the context)`,
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
    message: `line ${line}: entry id ${entryId} already used at line ${previousLine}; the later entry wins (as in pi)`,
    line,
    offset,
    entryId,
  };
}
