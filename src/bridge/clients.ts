/**
 * The clients of one bridge (`protocol.ts`): framing (one JSON object per `\n`-terminated line, a
 * trailing `\r` dropped; a line over `MAX_LINE_BYTES` or a malformed line closes the connection),
 * the hello (the announcement's token, compared in constant time, and the protocol generation;
 * no hello within `HELLO_TIMEOUT_MS` closes it; a wrong one closes it at once — nothing more is read
 * from that connection), at most `MAX_CLIENTS` authenticated clients, and requests → responses.
 *
 * Connections that have not said hello yet never count against `MAX_CLIENTS`: at most
 * `MAX_PENDING_CLIENTS` of them wait, and a new one pushes out the oldest, so connections that
 * never authenticate cannot lock the VS Code side out.
 */

import * as crypto from "node:crypto";
import type * as net from "node:net";
import { OpError } from "./operations";
import {
  BRIDGE_OPS,
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  HELLO_TIMEOUT_MS,
  MAX_CLIENTS,
  MAX_LINE_BYTES,
  type BridgeErrorCode,
  type BridgeOp,
  type ServerLine,
  type Welcome,
} from "./protocol";

/** What the clients need from the bridge of the session (`BridgeServer`). */
export interface ClientHost {
  /** The announcement's token (a hello must carry it). */
  token(): string;
  /** What a welcome says besides the protocol and bridge version (read at each hello). */
  welcome(): Pick<Welcome, "piVersion" | "pid" | "sessionFile" | "state">;
  /** Run a request's operation (see `BridgeOperations.execute`). */
  execute(op: BridgeOp, params: Record<string, unknown>): Promise<unknown>;
  /** Push the state to every authenticated client now. */
  pushNow(): void;
}

/** At most this many connections wait for their hello; a new one closes the oldest. */
export const MAX_PENDING_CLIENTS = 16;

/** How long a refused connection gets to receive its error line before it is destroyed (ms). */
const CLOSE_GRACE_MS = 1000;

/** One connected client. */
interface Client {
  socket: net.Socket;
  authenticated: boolean;
  /** Refused (wrong hello, bad line): nothing more is read, the socket is being closed. */
  closing: boolean;
  label?: string;
}

/** The connected clients of one bridge. */
export class BridgeClients {
  private readonly clients = new Set<Client>();

  constructor(private readonly host: ClientHost) {}

  /** The labels of the authenticated clients (`client` of their hello; `?` without). */
  labels(): string[] {
    return [...this.clients].filter((c) => c.authenticated).map((c) => c.label ?? "?");
  }

  /** Whether any client has said hello. */
  anyAuthenticated(): boolean {
    return [...this.clients].some((c) => c.authenticated);
  }

  /** Send `line` to every authenticated client. */
  broadcast(line: ServerLine): void {
    for (const c of this.clients) if (c.authenticated) send(c.socket, line);
  }

  /** Close every connection. */
  destroyAll(): void {
    for (const c of this.clients) c.socket.destroy();
    this.clients.clear();
  }

  /** Connections (authenticated or not) being served; for tests. */
  connectionCount(): number {
    return this.clients.size;
  }

  /**
   * Serve a new connection. It waits for its hello among at most {@link MAX_PENDING_CLIENTS}
   * (the oldest waiting one is closed to make room); authenticated clients are limited to
   * {@link MAX_CLIENTS} at the hello.
   */
  accept(socket: net.Socket): void {
    const client: Client = { socket, authenticated: false, closing: false };
    const pending = [...this.clients].filter((c) => !c.authenticated && !c.closing);
    if (pending.length >= MAX_PENDING_CLIENTS) {
      const oldest = pending[0]!;
      this.clients.delete(oldest);
      oldest.closing = true;
      oldest.socket.destroy();
    }
    this.clients.add(client);
    const helloTimer = setTimeout(() => {
      if (!client.authenticated) this.drop(client);
    }, HELLO_TIMEOUT_MS);
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      if (client.closing) return;
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const nl = buffer.indexOf(10);
        if (nl < 0) break;
        const line = buffer.subarray(0, nl).toString("utf8");
        buffer = buffer.subarray(nl + 1);
        this.onLine(client, line.endsWith("\r") ? line.slice(0, -1) : line, helloTimer);
        if (client.closing || socket.destroyed) return;
      }
      if (buffer.length > MAX_LINE_BYTES)
        this.refuse(client, { type: "error", code: "bad-request", message: "line too long" });
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(helloTimer);
      this.clients.delete(client);
    });
  }

  /** Close a connection now and forget it. */
  private drop(client: Client): void {
    client.closing = true;
    this.clients.delete(client);
    client.socket.destroy();
  }

  /**
   * Send a last error line, then close the connection — for good: it stops counting at once,
   * nothing more it sends is read, and it is destroyed once the line is out (or after
   * {@link CLOSE_GRACE_MS}), whether or not the other side closes its end.
   */
  private refuse(client: Client, line: ServerLine): void {
    if (client.closing) return;
    client.closing = true;
    this.clients.delete(client);
    const socket = client.socket;
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    timer.unref?.();
    if (socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(JSON.stringify(line) + "\n", () => {
      clearTimeout(timer);
      socket.destroy();
    });
  }

  private onLine(client: Client, line: string, helloTimer: NodeJS.Timeout): void {
    if (line.trim() === "") return;
    let message: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      message = parsed as Record<string, unknown>;
    } catch {
      this.refuse(client, { type: "error", code: "bad-request", message: "malformed line" });
      return;
    }
    if (!client.authenticated) {
      this.onHello(client, message, helloTimer);
      return;
    }
    const id = message.id;
    if (message.type !== "request" || typeof id !== "number" || !Number.isSafeInteger(id)) {
      this.refuse(client, { type: "error", code: "bad-request", message: "expected a request with a numeric id" });
      return;
    }
    const op = message.op as BridgeOp;
    const params = (message.params && typeof message.params === "object" ? message.params : {}) as Record<
      string,
      unknown
    >;
    if (!BRIDGE_OPS.includes(op)) {
      send(client.socket, {
        type: "response",
        id,
        ok: false,
        error: { code: "bad-request", message: `unknown operation ${String(op)}` },
      });
      return;
    }
    this.host.execute(op, params).then(
      (result) => {
        // operations that change the session: everyone sees the new state before the answer
        if (op !== "state" && op !== "cancel") this.host.pushNow();
        send(client.socket, { type: "response", id, ok: true, result });
      },
      (error: unknown) => {
        const code: BridgeErrorCode = error instanceof OpError ? error.code : "failed";
        send(client.socket, {
          type: "response",
          id,
          ok: false,
          error: { code, message: error instanceof Error ? error.message : String(error) },
        });
      },
    );
  }

  /**
   * The first line of a client: the token and the protocol generation, or an error and close
   * (the connection is gone at once: one guess per connection). {@link MAX_CLIENTS} is checked here.
   */
  private onHello(client: Client, message: Record<string, unknown>, helloTimer: NodeJS.Timeout): void {
    if (message.type !== "hello" || !tokensEqual(message.token, this.host.token())) {
      this.refuse(client, {
        type: "error",
        code: "unauthorized",
        message: "The live bridge refused the connection: wrong token.",
      });
      return;
    }
    if (message.protocol !== BRIDGE_PROTOCOL) {
      this.refuse(client, {
        type: "error",
        code: "protocol",
        message: `This pi runs pi-context bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}); the client speaks protocol ${String(message.protocol)}.`,
        protocol: BRIDGE_PROTOCOL,
        bridgeVersion: BRIDGE_VERSION,
      });
      return;
    }
    if ([...this.clients].filter((c) => c.authenticated).length >= MAX_CLIENTS) {
      this.refuse(client, { type: "error", code: "unavailable", message: `too many clients (${MAX_CLIENTS})` });
      return;
    }
    clearTimeout(helloTimer);
    client.authenticated = true;
    if (typeof message.client === "string") client.label = message.client.slice(0, 100);
    send(client.socket, {
      type: "welcome",
      protocol: BRIDGE_PROTOCOL,
      bridgeVersion: BRIDGE_VERSION,
      ...this.host.welcome(),
    });
  }
}

function tokensEqual(given: unknown, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function send(socket: net.Socket, line: ServerLine): void {
  if (socket.destroyed || !socket.writable) return;
  socket.write(JSON.stringify(line) + "\n");
}
