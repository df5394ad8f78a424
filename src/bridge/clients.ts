/**
 * The clients of one bridge (`protocol.ts`): framing (one JSON object per `\n`-terminated line, a
 * trailing `\r` dropped; a line over `MAX_LINE_BYTES` or a malformed line closes the connection),
 * the hello (the announcement's token, compared in constant time, and the protocol generation;
 * no hello within `HELLO_TIMEOUT_MS` closes it), at most `MAX_CLIENTS`, and requests → responses.
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

/** One connected client. */
interface Client {
  socket: net.Socket;
  authenticated: boolean;
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

  /** Serve a new connection (refused with `unavailable` beyond {@link MAX_CLIENTS}). */
  accept(socket: net.Socket): void {
    const client: Client = { socket, authenticated: false };
    if (this.clients.size >= MAX_CLIENTS) {
      send(socket, { type: "error", code: "unavailable", message: `too many clients (${MAX_CLIENTS})` });
      socket.end();
      return;
    }
    this.clients.add(client);
    const helloTimer = setTimeout(() => {
      if (!client.authenticated) socket.destroy();
    }, HELLO_TIMEOUT_MS);
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const nl = buffer.indexOf(10);
        if (nl < 0) break;
        const line = buffer.subarray(0, nl).toString("utf8");
        buffer = buffer.subarray(nl + 1);
        this.onLine(client, line.endsWith("\r") ? line.slice(0, -1) : line, helloTimer);
        if (socket.destroyed) return;
      }
      if (buffer.length > MAX_LINE_BYTES) {
        send(socket, { type: "error", code: "bad-request", message: "line too long" });
        socket.destroy();
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(helloTimer);
      this.clients.delete(client);
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
      send(client.socket, { type: "error", code: "bad-request", message: "malformed line" });
      client.socket.destroy();
      return;
    }
    if (!client.authenticated) {
      this.onHello(client, message, helloTimer);
      return;
    }
    const id = message.id;
    if (message.type !== "request" || typeof id !== "number" || !Number.isSafeInteger(id)) {
      send(client.socket, { type: "error", code: "bad-request", message: "expected a request with a numeric id" });
      client.socket.destroy();
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

  /** The first line of a client: the token and the protocol generation, or an error and close. */
  private onHello(client: Client, message: Record<string, unknown>, helloTimer: NodeJS.Timeout): void {
    if (message.type !== "hello" || !tokensEqual(message.token, this.host.token())) {
      send(client.socket, {
        type: "error",
        code: "unauthorized",
        message: "The live bridge refused the connection: wrong token.",
      });
      client.socket.end();
      return;
    }
    if (message.protocol !== BRIDGE_PROTOCOL) {
      send(client.socket, {
        type: "error",
        code: "protocol",
        message: `This pi runs pi-context bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}); the client speaks protocol ${String(message.protocol)}.`,
        protocol: BRIDGE_PROTOCOL,
        bridgeVersion: BRIDGE_VERSION,
      });
      client.socket.end();
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
