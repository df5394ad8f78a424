/**
 * The clients of one bridge: line framing, the hello (token compared in constant time), requests.
 * Clients without a hello never count against `MAX_CLIENTS`, so they cannot lock VS Code out.
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
  token(): string;
  welcome(): Pick<Welcome, "piVersion" | "pid" | "sessionFile" | "state">;
  execute(op: BridgeOp, params: Record<string, unknown>): Promise<unknown>;
  pushNow(): void;
}

/** At most this many connections wait for their hello; a new one closes the oldest. */
export const MAX_PENDING_CLIENTS = 16;

const CLOSE_GRACE_MS = 1000;

interface Client {
  socket: net.Socket;
  authenticated: boolean;
  closing: boolean;
  label?: string;
}

/** The connected clients of one bridge. */
export class BridgeClients {
  private readonly clients = new Set<Client>();

  constructor(private readonly host: ClientHost) {}

  labels(): string[] {
    return [...this.clients].filter((c) => c.authenticated).map((c) => c.label ?? "?");
  }

  anyAuthenticated(): boolean {
    return [...this.clients].some((c) => c.authenticated);
  }

  broadcast(line: ServerLine): void {
    for (const c of this.clients) if (c.authenticated) send(c.socket, line);
  }

  destroyAll(): void {
    for (const c of this.clients) c.socket.destroy();
    this.clients.clear();
  }

  connectionCount(): number {
    return this.clients.size;
  }

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

  private drop(client: Client): void {
    client.closing = true;
    this.clients.delete(client);
    client.socket.destroy();
  }

  /** Send a last error line and close for good: nothing more is read, destroyed after the grace time. */
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
        // everyone sees the new state before the answer
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

  /** Token and protocol generation, or an error and close: one guess per connection. */
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
