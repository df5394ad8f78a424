/**
 * The bridge's connections (`src/bridge/clients.ts`, issue 16 item 15) on a real Unix socket: a
 * wrong hello gets its error and the connection is closed by the bridge even when the other side
 * keeps its end open; one connection gets one guess; connections that never authenticate (silent
 * or refused) cannot fill the client limit; the limit still holds for authenticated clients.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { BridgeClients, MAX_PENDING_CLIENTS } from "../../../src/bridge/clients";
import { BRIDGE_PROTOCOL, MAX_CLIENTS } from "../../../src/bridge/protocol";

const TOKEN = "ab".repeat(32);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-clients-"));
const SOCKET = path.join(tmp, "1-a.sock");

/** A client connection that reads lines; `allowHalfOpen` keeps its side open after the bridge ends. */
class TestClient {
  readonly socket: net.Socket;
  readonly lines: Record<string, unknown>[] = [];
  /** The bridge closed the connection (its end). */
  closed = false;
  private buffer = "";
  readonly connected: Promise<void>;
  constructor() {
    this.socket = net.createConnection({ path: SOCKET, allowHalfOpen: true });
    this.connected = new Promise((resolve) => this.socket.once("connect", () => resolve()));
    this.socket.on("data", (chunk) => {
      this.buffer += chunk.toString("utf8");
      for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
        this.lines.push(JSON.parse(this.buffer.slice(0, nl)));
        this.buffer = this.buffer.slice(nl + 1);
      }
    });
    this.socket.on("error", () => undefined);
    // the bridge closed its end (our end stays open: allowHalfOpen), or the socket is gone
    this.socket.on("end", () => (this.closed = true));
    this.socket.on("close", () => (this.closed = true));
  }
  send(...lines: object[]): void {
    this.socket.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  }
  hello(token = TOKEN): void {
    this.send({ type: "hello", token, protocol: BRIDGE_PROTOCOL, client: "test" });
  }
}

async function until(what: string, check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("bridge connections", () => {
  let server: net.Server;
  let clients: BridgeClients;
  const open: TestClient[] = [];
  const connect = async () => {
    const c = new TestClient();
    open.push(c);
    await c.connected;
    return c;
  };
  before(async () => {
    clients = new BridgeClients({
      token: () => TOKEN,
      welcome: () => ({ piVersion: "1.6.0", pid: process.pid, sessionFile: "/s.jsonl", state: {} as never }),
      execute: async () => ({}),
      pushNow: () => undefined,
    });
    server = net.createServer((socket) => clients.accept(socket));
    await new Promise<void>((resolve) => server.listen(SOCKET, resolve));
  });
  after(async () => {
    for (const c of open) c.socket.destroy();
    clients.destroyAll();
    await new Promise((r) => server.close(r));
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const closeAll = async () => {
    for (const c of open.splice(0)) c.socket.destroy();
    await until("the bridge to forget closed connections", () => clients.connectionCount() === 0);
  };

  it("a wrong hello: the error line, then the bridge closes the connection (also a half-open one)", async () => {
    const c = await connect();
    c.hello("cd".repeat(32));
    await until("the error and the close", () => c.closed);
    assert.equal(c.lines[0]?.code, "unauthorized");
    assert.equal(clients.connectionCount(), 0);
    await closeAll();
  });

  it("one guess per connection: a right token after a wrong one in the same write is never read", async () => {
    const c = await connect();
    c.send(
      { type: "hello", token: "cd".repeat(32), protocol: BRIDGE_PROTOCOL },
      { type: "hello", token: TOKEN, protocol: BRIDGE_PROTOCOL },
    );
    await until("the close", () => c.closed);
    assert.deepEqual(
      c.lines.map((l) => l.type),
      ["error"],
    );
    assert.deepEqual(clients.labels(), [], "nobody authenticated");
    await closeAll();
  });

  it("refused and silent connections never fill the client limit: VS Code still gets in", async () => {
    const refused: TestClient[] = [];
    for (let i = 0; i < MAX_CLIENTS + 4; i++) {
      const c = await connect();
      c.hello("cd".repeat(32));
      refused.push(c);
    }
    await until("all refused connections to close", () => refused.every((c) => c.closed));
    for (let i = 0; i < MAX_PENDING_CLIENTS + 8; i++) await connect(); // silent: never say hello
    const legit = await connect();
    legit.hello();
    await until("the welcome", () => legit.lines.length > 0);
    assert.equal(legit.lines[0]?.type, "welcome", JSON.stringify(legit.lines[0]));
    assert.ok(clients.connectionCount() <= MAX_PENDING_CLIENTS + 1, `${clients.connectionCount()} connections kept`);
    await closeAll();
  });

  it(`at most ${MAX_CLIENTS} authenticated clients; the next one is told so and closed`, async () => {
    const ok: TestClient[] = [];
    for (let i = 0; i < MAX_CLIENTS; i++) {
      const c = await connect();
      c.hello();
      ok.push(c);
    }
    await until("the welcomes", () => ok.every((c) => c.lines[0]?.type === "welcome"));
    const extra = await connect();
    extra.hello();
    await until("the refusal", () => extra.closed);
    assert.equal(extra.lines[0]?.code, "unavailable");
    assert.equal(clients.labels().length, MAX_CLIENTS);
    await closeAll();
  });
});
