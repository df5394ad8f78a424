/**
 * The live bridge protocol: what the pi extension (`activate.ts`, loaded by the running pi) and the
 * VS Code side (`client.ts`) say to each other, and the constants both build in. No imports, so
 * the bridge bundle and the extension share exactly these definitions.
 *
 * Transport: one Unix domain socket (Windows: named pipe) per running pi, never TCP. Framing: one
 * JSON object per line, `\n`-terminated (split on `\n` only; lines over {@link MAX_LINE_BYTES}
 * close the connection). The first client line must be a {@link ClientHello} carrying the token
 * of the announcement; anything else, or no hello within {@link HELLO_TIMEOUT_MS}, closes it.
 *
 *   client → bridge   {"type":"hello","token":"…","protocol":1,"client":"pi-context-vscode/0.1.0"}
 *   bridge → client   {"type":"welcome",…,"state":{…}}     or {"type":"error","code":"unauthorized",…} + close
 *   bridge → client   {"type":"state","state":{…}}         after every turn, compaction, navigation, model change
 *   client → bridge   {"type":"request","id":1,"op":"compact","params":{"customInstructions":"…","keepFrom":"a1b2c3d4"}}
 *   client → bridge   {"type":"request","id":2,"op":"contextEdit","params":{"drafts":[{"type":"context_edit",…}],"leafId":"…"}}
 *   bridge → client   {"type":"response","id":1,"ok":true,"result":{…}}  or  {"ok":false,"error":{"code","message"}}
 */

/** Protocol generation. A client and a bridge talk only when these are equal (2: context edits). */
export const BRIDGE_PROTOCOL = 2;

/**
 * Version of the bridge code; bump with every change of the bridge (install offers the update).
 * 1.3.0: `compact` with `keepFrom` ("Compact up to here") and with a `summary` made by another
 * summarizer, `compactionFailure` in the state (pi's `session_compact_failed`). An older bridge
 * ignores unknown params and would compact at pi's cut with pi's model: a client checks first.
 */
export const BRIDGE_VERSION = "1.3.0";

/** The first bridge version that moves pi's cut for `compact` with `keepFrom` ("Compact up to here"). */
export const KEEP_FROM_BRIDGE_VERSION = "1.3.0";

/** The first bridge version whose `compact` takes a `summary` ({@link ProvidedCompaction}). */
export const SUMMARY_COMPACT_SINCE = "1.3.0";

/** True when a bridge of `version` honours `compact`'s `keepFrom` (never send it to an older one). */
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

/** The file name of the bridge in `<agentDir>/extensions/` (pi discovers `*.js` there). */
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

/**
 * What a running bridge writes to `<agentDir>/pi-context/live/<pid>-<id>.json` (mode 0600, in a
 * 0700 directory): enough to find it for a session file and to connect.
 */
export interface Announcement {
  kind: typeof ANNOUNCE_KIND;
  protocol: number;
  bridgeVersion: string;
  piVersion: string;
  /** The pi process. */
  pid: number;
  /** Absolute path of the session file pi has open (as pi names it). */
  sessionFile: string;
  sessionId?: string;
  cwd?: string;
  /** Unix socket path or Windows pipe name. */
  socket: string;
  /** Random secret (hex) the client must present. */
  token: string;
  /** ms since epoch. */
  startedAt: number;
}

/** pi's `ctx.getContextUsage()` (`AgentSession.getContextUsage`): `tokens`/`percent` null right after a compaction. */
export interface BridgeUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** What pi is doing. */
export type BridgeActivity = "idle" | "streaming" | "compacting" | "navigating";

/** The live state the bridge pushes. */
export interface BridgeState {
  /** Increases with every push of one bridge. */
  seq: number;
  /** ms since epoch. */
  at: number;
  sessionFile: string;
  sessionId?: string;
  /** pi's in-memory leaf (after a navigation without summary pi writes nothing, so the file does not show it). */
  leafId: string | null;
  /** `ctx.isIdle()`: no agent run, compaction or branch summary. */
  idle: boolean;
  activity: BridgeActivity;
  /** `ctx.getContextUsage()`; null without a model or window. */
  usage: BridgeUsage | null;
  /**
   * `ctx.model`; `cost` (bridge 1.2.0+): its prices from the running pi's own catalog, US dollars
   * per million tokens (pi-ai `Model.cost`, passed as pi has it; the client validates it).
   */
  model: { provider: string; id: string; contextWindow?: number; cost?: unknown } | null;
  thinkingLevel?: string;
  /** pi's `getCompactionSettings(model)` over its merged settings; null when pi would throw (see `compactionError`). */
  compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number } | null;
  compactionError?: string;
  branchSummary?: { reserveTokens: number; skipPrompt: boolean };
  /** The latest context-edit batches of this bridge (at most {@link MAX_EDIT_BATCHES}), oldest first. */
  contextEdits?: BridgeEditBatch[];
  /** pi's latest failed compaction in this session (bridge 1.3.0+; older bridges never send it). */
  compactionFailure?: BridgeCompactionFailure;
}

/**
 * pi 1.6.0's `session_compact_failed` event (`core/extensions/types.d.ts`
 * `SessionCompactFailedEvent`), as the bridge saw it: a `/compact`, an auto-compaction at the
 * threshold or an overflow recovery that failed or was aborted (e.g. the summary hit the model's
 * output limit).
 */
export interface BridgeCompactionFailure {
  /** Counts the failures this bridge saw (1, 2, …): a client reports each one once. */
  seq: number;
  /** ms since epoch. */
  at: number;
  /** What triggered it: pi's `/compact` (or ours), the context threshold, context overflow recovery. */
  reason: "manual" | "threshold" | "overflow";
  /** pi's error text ("Auto-compaction failed: …"); absent when it was aborted. */
  errorMessage?: string;
  aborted: boolean;
  /** The aborted turn would have been retried after it (overflow recovery). */
  willRetry: boolean;
  /** The failing summary came from an extension's `session_before_compact` handler. */
  fromExtension: boolean;
  /** The compaction this bridge ran for a client (that client got the error in its response). */
  byClient: boolean;
}

/**
 * A compaction summary made by another summarizer, for pi to append as its own compaction (bridge
 * 1.3.0+): the bridge returns it from pi's `session_before_compact` when pi's preparation keeps
 * from the same entry (else pi's compaction is cancelled, nothing written, and the request fails
 * with a message saying so). pi writes the entry (`fromHook: true`, pi's `tokensBefore`).
 */
export interface ProvidedCompaction {
  summary: string;
  firstKeptEntryId: string;
  details?: { readFiles: string[]; modifiedFiles: string[] };
}

/** pi's `ContextEditEntryDraft`: what a `context_edit` appends, without id, parent and time. */
export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  /** `null` omits the target; otherwise its new content (a string or content blocks). */
  replacement: { content: string | unknown[] } | null;
}

/**
 * A batch of context edits sent to the bridge: `queued` until pi's next turn boundary while pi
 * streams, `handed` to pi at the boundary (pi validates and appends), `applied` once pi's session
 * has the entries, `dropped` when pi did not take them (`message` says why), `cancelled` by the client.
 */
export interface BridgeEditBatch {
  batchId: string;
  status: "queued" | "handed" | "applied" | "dropped" | "cancelled";
  targetIds: string[];
  /** The `context_edit` entries pi appended (applied batches), in order. */
  entryIds?: string[];
  message?: string;
  /** ms since epoch of the last status change. */
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
  /** Free text for the bridge's status, e.g. `pi-context-vscode/0.1.0`. */
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
  /** Wrong token. */
  | "unauthorized"
  /** Protocol generations differ. */
  | "protocol"
  /** Malformed line or request. */
  | "bad-request"
  /** pi is busy: the message is pi's own "Wait for …" error. */
  | "busy"
  /** pi refused or failed (its message). */
  | "failed"
  /** The operation was cancelled (client cancel or pi abort). */
  | "cancelled"
  /** The bridge cannot run the operation in this pi (missing API, command not resolvable). */
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
  /** The current state. */
  state: { params: Record<string, never>; result: BridgeState };
  /**
   * pi's `/compact [customInstructions]` (`ctx.compact`). Refused with pi's wait error unless pi is idle.
   * `keepFrom` (bridge 1.3.0+, "Compact up to here"): pi keeps from that entry on — the bridge moves
   * the cut of pi's own preparation in its `session_before_compact` hook (`cutAt.ts`), pi
   * summarizes and writes its own entry; refused (`failed`) when pi would not cut there.
   */
  compact: {
    /** `summary` (1.3.0+): pi appends it instead of summarizing with its model. */
    params: { customInstructions?: string; keepFrom?: string; summary?: ProvidedCompaction };
    result: {
      entryId: string | null;
      firstKeptEntryId: string;
      tokensBefore: number;
      estimatedTokensAfter?: number;
      leafId: string | null;
    };
  };
  /** pi's `/tree` navigation (`ctx.navigateTree` from a command context). */
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
      /** Entries pi appended (branch summary, label), in order. */
      entries: { type: string; id: string; parentId: string | null }[];
    };
  };
  /** pi's label editor (`pi.setLabel`): a `label` entry; empty/absent label clears. */
  setLabel: { params: { targetId: string; label?: string }; result: { entryId: string | null } };
  /**
   * pi's `/name` (`pi.setSessionName` → `SessionManager.appendSessionInfo`): a `session_info` entry;
   * the name's line breaks become a space, trimmed; empty is refused. Since bridge 1.1.0.
   */
  setSessionName: { params: { name: string }; result: { entryId: string | null; name: string | null } };
  /** Abort the compaction / branch summary this bridge started (never a response of the user's). */
  cancel: { params: Record<string, never>; result: { cancelled: boolean } };
  /**
   * Context edits applied by pi itself: while pi is idle appended at once through its session
   * manager (its next request is built from the session, so it carries them; `leafId` = the leaf
   * the edits were planned at, refused when pi's leaf moved); while pi streams queued and returned
   * from its next `turn_end` / `agent_before_settle` boundary handler (pi's route for extension
   * edits), so the next request of the run carries them. Refused while pi compacts or navigates.
   */
  contextEdit: {
    params: { drafts: ContextEditDraft[]; leafId?: string | null };
    result: {
      batchId: string;
      status: "applied" | "queued";
      /** Applied: the appended `context_edit` entries, in order. */
      entries: { id: string; targetId: string }[];
      /** pi's leaf afterwards. */
      leafId: string | null;
    };
  };
  /** Withdraw a queued batch (before pi's boundary took it). */
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

/**
 * Check an announcement's shape (it is read from disk: never trust it).
 * @returns the announcement, or a message saying what is wrong.
 */
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
