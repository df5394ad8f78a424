/**
 * The VS Code side's client of a live bridge: connect to an announced bridge, authenticate with
 * its token, receive state pushes, send requests. No `vscode` import (unit- and pi-tested in
 * plain Node). Every wait has a deadline: a killed pi, a wrong token, a bridge of another
 * protocol or a pi that stopped answering end in a {@link BridgeError} with a clear message.
 */

import * as net from "node:net";
import { isProcessAlive } from "../bridge/announce";
import {
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  MAX_LINE_BYTES,
  type Announcement,
  type BridgeErrorCode,
  type BridgeOp,
  type BridgeOps,
  type BridgeState,
  type ServerLine,
  type Welcome,
} from "../bridge/protocol";
import * as l10n from "@vscode/l10n";

/** Why a connection or request failed. */
export type BridgeClientErrorCode =
  | BridgeErrorCode
  /** The announced pi is gone (process dead, socket refused or missing). */
  | "stale"
  /** No answer in time. */
  | "timeout"
  /** The connection closed (pi quit or was killed) before the answer. */
  | "closed";

/** A failed connection or request. `message` is written for users. */
export class BridgeError extends Error {
  constructor(
    readonly code: BridgeClientErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "BridgeError";
  }
}

/** Options of {@link connectBridge}. */
export interface ConnectOptions {
  /** Deadline for connecting and the welcome (ms; default 3000). */
  timeoutMs?: number;
  /** Sent in the hello (shown by `/pi-context-bridge` in pi). */
  clientName?: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** Deadline (ms); default per operation ({@link DEFAULT_TIMEOUTS_MS}). */
  timeoutMs?: number;
  /** Aborting sends `cancel` (pi aborts the compaction / branch summary this bridge started). */
  signal?: AbortSignal;
}

/** Default request deadlines (ms). Summaries by pi's model can take minutes. */
export const DEFAULT_TIMEOUTS_MS: Record<BridgeOp, number> = {
  state: 5_000,
  setLabel: 10_000,
  setSessionName: 10_000,
  cancel: 5_000,
  compact: 15 * 60_000,
  navigate: 15 * 60_000,
  contextEdit: 10_000,
  cancelContextEdit: 5_000,
};

/** How long to wait for pi's answer after a cancel before giving up (ms). */
export const CANCEL_GRACE_MS = 10_000;

/** Who we are, for the bridge's status. */
export const CLIENT_NAME = `pi-context-vscode/${BRIDGE_VERSION}`;

function describePi(a: Announcement): string {
  return l10n.t("pi {0} (pid {1})", a.piVersion, a.pid);
}

/**
 * Connect to the bridge of `announcement` and authenticate.
 * @throws {BridgeError} `protocol` (other bridge generation: checked before connecting, and by the
 *   bridge), `stale` (pi gone), `unauthorized` (wrong token), `timeout`, `closed`.
 */
export async function connectBridge(
  announcement: Announcement,
  options: ConnectOptions = {},
): Promise<BridgeConnection> {
  if (announcement.protocol !== BRIDGE_PROTOCOL) {
    throw new BridgeError(
      "protocol",
      l10n.t(
        'The running {0} has pi-context bridge {1} (protocol {2}); this extension needs protocol {3} (bridge {4}). Run "Pi Context: Install Live Bridge" to update it, then restart pi (or /reload in pi).',
        describePi(announcement),
        announcement.bridgeVersion,
        announcement.protocol,
        BRIDGE_PROTOCOL,
        BRIDGE_VERSION,
      ),
    );
  }
  if (!isProcessAlive(announcement.pid))
    throw new BridgeError(
      "stale",
      l10n.t("The live bridge of {0} is stale: that pi is no longer running.", describePi(announcement)),
    );
  const timeoutMs = options.timeoutMs ?? 3000;
  const socket = net.createConnection(announcement.socket);
  return new Promise<BridgeConnection>((resolve, reject) => {
    let settled = false;
    const fail = (error: BridgeError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () =>
        fail(
          new BridgeError(
            "timeout",
            l10n.t("The live bridge of {0} did not answer within {1} ms.", describePi(announcement), timeoutMs),
          ),
        ),
      timeoutMs,
    );
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" || error.code === "ENOENT")
        fail(
          new BridgeError(
            "stale",
            l10n.t(
              "The live bridge of {0} is stale: nothing listens on its socket ({1}).",
              describePi(announcement),
              error.code,
            ),
          ),
        );
      else
        fail(
          new BridgeError(
            "closed",
            l10n.t("Could not connect to the live bridge of {0}: {1}", describePi(announcement), error.message),
          ),
        );
    });
    socket.once("close", () =>
      fail(
        new BridgeError("closed", l10n.t("The live bridge of {0} closed the connection.", describePi(announcement))),
      ),
    );
    socket.once("connect", () => {
      socket.write(
        JSON.stringify({
          type: "hello",
          token: announcement.token,
          protocol: BRIDGE_PROTOCOL,
          client: options.clientName ?? CLIENT_NAME,
        }) + "\n",
      );
    });
    const reader = new LineReader(
      socket,
      (line) => {
        if (settled) return;
        if (line.type === "welcome") {
          settled = true;
          clearTimeout(timer);
          socket.removeAllListeners("error");
          socket.removeAllListeners("close");
          const connection = new BridgeConnection(socket, reader, announcement, line);
          resolve(connection);
          return;
        }
        if (line.type === "error") {
          if (line.code === "unauthorized")
            fail(
              new BridgeError(
                "unauthorized",
                l10n.t(
                  "The live bridge of {0} refused the connection: wrong token (the announcement file does not match the running bridge).",
                  describePi(announcement),
                ),
              ),
            );
          else if (line.code === "protocol")
            fail(
              new BridgeError(
                "protocol",
                l10n.t(
                  'The running {0} has pi-context bridge {1} (protocol {2}); this extension needs protocol {3}. Run "Pi Context: Install Live Bridge" to update it, then restart pi.',
                  describePi(announcement),
                  line.bridgeVersion ?? "?",
                  line.protocol ?? "?",
                  BRIDGE_PROTOCOL,
                ),
              ),
            );
          else fail(new BridgeError(line.code, line.message));
          return;
        }
        fail(
          new BridgeError(
            "bad-request",
            l10n.t(
              "The live bridge of {0} answered with an unexpected {1} line.",
              describePi(announcement),
              String((line as { type?: unknown }).type),
            ),
          ),
        );
      },
      (problem) =>
        fail(
          new BridgeError("bad-request", l10n.t("The live bridge of {0} sent {1}.", describePi(announcement), problem)),
        ),
    );
  });
}

/** Reads `\n`-framed JSON lines (only `\n` splits; lines over the limit are an error) into replaceable handlers. */
class LineReader {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(
    private readonly socket: net.Socket,
    public onLine: (line: ServerLine) => void,
    public onProblem: (problem: string) => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const nl = this.buffer.indexOf(10);
      if (nl < 0) break;
      const text = this.buffer.subarray(0, nl).toString("utf8");
      this.buffer = this.buffer.subarray(nl + 1);
      if (text.trim() === "") continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        this.onProblem(l10n.t("a malformed line"));
        return;
      }
      if (!parsed || typeof parsed !== "object") {
        this.onProblem(l10n.t("a line that is not an object"));
        return;
      }
      this.onLine(parsed as ServerLine);
      if (this.socket.destroyed) return;
    }
    if (this.buffer.length > MAX_LINE_BYTES) this.onProblem(l10n.t("a line over the size limit"));
  }
}

interface Pending {
  op: BridgeOp;
  resolve(value: unknown): void;
  reject(error: BridgeError): void;
  timer: NodeJS.Timeout;
}

/** An authenticated connection to one running pi. */
export class BridgeConnection {
  /** The latest state pushed (or received with the welcome). */
  state: BridgeState;
  readonly welcome: Welcome;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly stateListeners = new Set<(state: BridgeState) => void>();
  private readonly closeListeners = new Set<(reason: BridgeError) => void>();
  private closedWith: BridgeError | undefined;

  constructor(
    private readonly socket: net.Socket,
    reader: LineReader,
    readonly announcement: Announcement,
    welcome: Welcome,
  ) {
    this.welcome = welcome;
    this.state = welcome.state;
    reader.onLine = (line) => this.onLine(line);
    reader.onProblem = (problem) =>
      this.shutdown(new BridgeError("bad-request", l10n.t("The live bridge sent {0}.", problem)));
    socket.on("error", () => undefined);
    socket.on("close", () =>
      this.shutdown(
        new BridgeError(
          "closed",
          l10n.t("The connection to {0} closed (pi quit or was killed).", describePi(announcement)),
        ),
      ),
    );
  }

  /** True once the connection is gone. */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Listen to state pushes; returns an unsubscribe function. */
  onState(listener: (state: BridgeState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Called once when the connection closes (with why). */
  onClose(listener: (reason: BridgeError) => void): () => void {
    if (this.closedWith) {
      const reason = this.closedWith;
      queueMicrotask(() => listener(reason));
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Run an operation in pi.
   * @throws {BridgeError} with pi's message (`busy` = pi's "Wait for …", `failed`, `cancelled`),
   *   or `timeout` / `closed`.
   */
  request<K extends BridgeOp>(
    op: K,
    params: BridgeOps[K]["params"],
    options: RequestOptions = {},
  ): Promise<BridgeOps[K]["result"]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUTS_MS[op];
    return new Promise<BridgeOps[K]["result"]>((resolve, reject) => {
      const onAbort = () => {
        void this.request("cancel", {}).catch(() => undefined);
        clearTimeout(entry.timer);
        entry.timer = setTimeout(
          () => settle(new BridgeError("cancelled", l10n.t("Cancelled; pi did not confirm within 10 s."))),
          CANCEL_GRACE_MS,
        );
      };
      const settle = (error: BridgeError | undefined, value?: unknown) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(entry.timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve(value as BridgeOps[K]["result"]);
      };
      const entry: Pending = {
        op,
        resolve: (value) => settle(undefined, value),
        reject: (error) => settle(error),
        timer: setTimeout(
          () =>
            settle(
              new BridgeError(
                "timeout",
                l10n.t(
                  'pi (pid {0}) did not finish "{1}" within {2} s.',
                  this.announcement.pid,
                  op,
                  Math.round(timeoutMs / 1000),
                ),
              ),
            ),
          timeoutMs,
        ),
      };
      this.pending.set(id, entry);
      if (options.signal) {
        if (options.signal.aborted) queueMicrotask(onAbort);
        else options.signal.addEventListener("abort", onAbort, { once: true });
      }
      this.socket.write(JSON.stringify({ type: "request", id, op, params }) + "\n");
    });
  }

  /** Close the connection (pending requests fail with `closed`). */
  close(): void {
    this.shutdown(new BridgeError("closed", l10n.t("The connection to the live bridge was closed.")));
  }

  private onLine(line: ServerLine): void {
    if (line.type === "state") {
      if (
        line.state &&
        typeof line.state === "object" &&
        (typeof this.state?.seq !== "number" || line.state.seq >= this.state.seq)
      ) {
        this.state = line.state;
        for (const listener of [...this.stateListeners]) listener(line.state);
      }
      return;
    }
    if (line.type === "response") {
      const pending = this.pending.get(line.id);
      if (!pending) return;
      if (line.ok) pending.resolve(line.result);
      else pending.reject(new BridgeError(line.error.code, line.error.message));
      return;
    }
    if (line.type === "error") this.shutdown(new BridgeError(line.code, line.message));
  }

  private shutdown(reason: BridgeError): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    this.socket.destroy();
    for (const p of [...this.pending.values()]) p.reject(reason);
    this.pending.clear();
    for (const listener of [...this.closeListeners]) listener(reason);
    this.closeListeners.clear();
    this.stateListeners.clear();
  }
}
