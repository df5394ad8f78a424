/**
 * What the bridge inside pi and the VS Code side (`liveBridge/client.ts`) say to each other. No imports, so
 * both bundles share exactly these definitions. One Unix socket (Windows: named pipe) per pi,
 * never TCP; one JSON object per `\n`-terminated line; the first client line is a hello with the token.
 */

/** A client and a bridge talk only when these are equal (2: context edits). */
export const BRIDGE_PROTOCOL = 2;

/** Bump with every change of the bridge (install offers the update). */
export const BRIDGE_VERSION = "1.3.0";

/** The first bridge version that moves pi's cut for `compact` with `keepFrom` ("Compact up to here"). */
export const KEEP_FROM_BRIDGE_VERSION = "1.3.0";

/** The first bridge version whose `compact` takes a `summary` ({@link ProvidedCompaction}). */
export const SUMMARY_COMPACT_SINCE = "1.3.0";

/** An older bridge ignores `keepFrom` and would compact at pi's cut: never send it one. */
export function bridgeSupportsKeepFrom(version: string): boolean {
  const parts = (v: string) => v.split(".").map((x) => Number.parseInt(x, 10) || 0);
  const [a, b] = [parts(version), parts(KEEP_FROM_BRIDGE_VERSION)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** The pi versions the bridge is tested against (pi 1.6.x). */
export const PI_VERSION_RANGE = { text: "1.6.x", major: 1, minor: 6 } as const;

/** True when `version` (e.g. `1.6.0`) is in {@link PI_VERSION_RANGE}. */
export function isTestedPiVersion(version: string): boolean {
  const m = /^(\d+)\.(\d+)\./.exec(version);
  return !!m && Number(m[1]) === PI_VERSION_RANGE.major && Number(m[2]) === PI_VERSION_RANGE.minor;
}

/** pi discovers `*.js` in `<agentDir>/extensions/`. */
export const BRIDGE_FILE_NAME = "pi-context-bridge.js";

/** The pi command the bridge registers (`/pi-context-bridge` shows its status in pi). */
export const BRIDGE_COMMAND = "pi-context-bridge";

/** `kind` of an announcement file. */
export const ANNOUNCE_KIND = "pi-context-bridge";

/** Longest accepted line (bytes) in either direction. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** The bridge closes a connection that has not said hello within this time (ms). */
export const HELLO_TIMEOUT_MS = 5000;

/** At most this many authenticated clients per bridge. */
export const MAX_CLIENTS = 16;

export interface Announcement {
  kind: typeof ANNOUNCE_KIND;
  protocol: number;
  bridgeVersion: string;
  piVersion: string;
  pid: number;
  sessionFile: string;
  sessionId?: string;
  cwd?: string;
  socket: string;
  token: string;
  startedAt: number;
}

/** pi's `ctx.getContextUsage()`: `tokens`/`percent` null right after a compaction. */
export interface BridgeUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** What pi is doing. */
export type BridgeActivity = "idle" | "streaming" | "compacting" | "navigating";

/** The live state the bridge pushes. */
export interface BridgeState {
  seq: number;
  at: number;
  sessionFile: string;
  sessionId?: string;
  /** pi's in-memory leaf: after a navigation without summary pi writes nothing to the file. */
  leafId: string | null;
  idle: boolean;
  activity: BridgeActivity;
  usage: BridgeUsage | null;
  /** `cost` (bridge 1.2.0+): pi-ai `Model.cost` as pi has it (the client validates it). */
  model: { provider: string; id: string; contextWindow?: number; cost?: unknown } | null;
  thinkingLevel?: string;
  compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number } | null;
  compactionError?: string;
  branchSummary?: { reserveTokens: number; skipPrompt: boolean };
  contextEdits?: BridgeEditBatch[];
  /** Bridge 1.3.0+; older bridges never send it. */
  compactionFailure?: BridgeCompactionFailure;
}

/** pi 1.6.0's `session_compact_failed` event, as the bridge saw it. */
export interface BridgeCompactionFailure {
  /** A client reports each failure once. */
  seq: number;
  at: number;
  reason: "manual" | "threshold" | "overflow";
  /** Absent when it was aborted. */
  errorMessage?: string;
  aborted: boolean;
  willRetry: boolean;
  fromExtension: boolean;
  byClient: boolean;
}

/**
 * A summary made by another summarizer (bridge 1.3.0+): pi appends it as its own compaction only
 * when its preparation keeps from the same entry; else pi's compaction is cancelled, nothing written.
 */
export interface ProvidedCompaction {
  summary: string;
  firstKeptEntryId: string;
  details?: { readFiles: string[]; modifiedFiles: string[] };
}

/** pi's `ContextEditEntryDraft`. */
export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  /** `null` omits the target. */
  replacement: { content: string | unknown[] } | null;
}

/** `queued` while pi streams, `handed` at its boundary, then `applied`, `dropped` or `cancelled`. */
export interface BridgeEditBatch {
  batchId: string;
  status: "queued" | "handed" | "applied" | "dropped" | "cancelled";
  targetIds: string[];
  entryIds?: string[];
  message?: string;
  at: number;
}

/** Batches kept in {@link BridgeState.contextEdits}. */
export const MAX_EDIT_BATCHES = 16;

/** Drafts accepted in one `contextEdit` request. */
export const MAX_EDIT_DRAFTS = 1000;

/** First line a client sends. */
export interface ClientHello {
  type: "hello";
  token: string;
  protocol: number;
  client?: string;
}

/** The bridge accepted the hello. */
export interface Welcome {
  type: "welcome";
  protocol: number;
  bridgeVersion: string;
  piVersion: string;
  pid: number;
  sessionFile: string;
  state: BridgeState;
}

/** Error codes on the connection (then closed) or in responses. */
export type BridgeErrorCode =
  | "unauthorized"
  | "protocol"
  | "bad-request"
  /** The message is pi's own "Wait for …" error. */
  | "busy"
  | "failed"
  | "cancelled"
  | "unavailable";

/** Sent instead of `welcome` (then the bridge closes the connection). */
export interface ConnectionError {
  type: "error";
  code: BridgeErrorCode;
  message: string;
  protocol?: number;
  bridgeVersion?: string;
}

/** A pushed state. */
export interface StatePush {
  type: "state";
  state: BridgeState;
}

/** Parameters of each operation, and what it resolves with. */
export interface BridgeOps {
  state: { params: Record<string, never>; result: BridgeState };
  /** pi's `/compact`; `keepFrom` (1.3.0+) moves pi's own cut (`cutAt.ts`), refused where pi would not cut. */
  compact: {
    params: { customInstructions?: string; keepFrom?: string; summary?: ProvidedCompaction };
    result: {
      entryId: string | null;
      firstKeptEntryId: string;
      tokensBefore: number;
      estimatedTokensAfter?: number;
      leafId: string | null;
    };
  };
  navigate: {
    params: {
      targetId: string;
      summarize?: boolean;
      customInstructions?: string;
      replaceInstructions?: boolean;
      label?: string;
    };
    result: {
      cancelled: boolean;
      aborted?: boolean;
      oldLeafId: string | null;
      newLeafId: string | null;
      entries: { type: string; id: string; parentId: string | null }[];
    };
  };
  setLabel: { params: { targetId: string; label?: string }; result: { entryId: string | null } };
  /** pi's `/name`: line breaks become a space, trimmed; empty is refused. Since bridge 1.1.0. */
  setSessionName: { params: { name: string }; result: { entryId: string | null; name: string | null } };
  /** Only what this bridge started, never a response of the user's. */
  cancel: { params: Record<string, never>; result: { cancelled: boolean } };
  /** Refused when pi's leaf moved from `leafId`, or while pi compacts or navigates. */
  contextEdit: {
    params: { drafts: ContextEditDraft[]; leafId?: string | null };
    result: {
      batchId: string;
      status: "applied" | "queued";
      entries: { id: string; targetId: string }[];
      leafId: string | null;
    };
  };
  cancelContextEdit: { params: { batchId: string }; result: { cancelled: boolean } };
}

export type BridgeOp = keyof BridgeOps;

/** A request line. */
export interface RequestLine<K extends BridgeOp = BridgeOp> {
  type: "request";
  id: number;
  op: K;
  params: BridgeOps[K]["params"];
}

/** A response line. */
export type ResponseLine =
  | { type: "response"; id: number; ok: true; result: unknown }
  | { type: "response"; id: number; ok: false; error: { code: BridgeErrorCode; message: string } };

/** Everything the bridge sends. */
export type ServerLine = Welcome | ConnectionError | StatePush | ResponseLine;

/** Operation names (for validation). */
export const BRIDGE_OPS: readonly BridgeOp[] = [
  "state",
  "compact",
  "navigate",
  "setLabel",
  "setSessionName",
  "cancel",
  "contextEdit",
  "cancelContextEdit",
];

/** Read from disk: never trust it. @returns the announcement, or what is wrong. */
export function parseAnnouncement(value: unknown): Announcement | { error: string } {
  if (!value || typeof value !== "object") return { error: "not an object" };
  const a = value as Record<string, unknown>;
  if (a.kind !== ANNOUNCE_KIND) return { error: `kind is not ${ANNOUNCE_KIND}` };
  const str = (k: string) => typeof a[k] === "string" && (a[k] as string).length > 0 && (a[k] as string).length < 4096;
  if (typeof a.protocol !== "number" || !Number.isInteger(a.protocol)) return { error: "protocol missing" };
  for (const k of ["bridgeVersion", "piVersion", "sessionFile", "socket", "token"])
    if (!str(k)) return { error: `${k} missing` };
  if (typeof a.pid !== "number" || !Number.isInteger(a.pid) || a.pid <= 0) return { error: "pid missing" };
  if (typeof a.startedAt !== "number") return { error: "startedAt missing" };
  if (!/^[0-9a-f]{32,128}$/.test(a.token as string)) return { error: "token malformed" };
  const out: Announcement = {
    kind: ANNOUNCE_KIND,
    protocol: a.protocol,
    bridgeVersion: a.bridgeVersion as string,
    piVersion: a.piVersion as string,
    pid: a.pid,
    sessionFile: a.sessionFile as string,
    socket: a.socket as string,
    token: a.token as string,
    startedAt: a.startedAt,
  };
  if (typeof a.sessionId === "string") out.sessionId = a.sessionId;
  if (typeof a.cwd === "string") out.cwd = a.cwd;
  return out;
}
