/**
 * The live bridge's pure parts in plain Node: announcement files and private directories, the
 * install marker (current / outdated / newer / modified / foreign), pi's live numbers over our
 * analysis and the gauge's live badge, and client deadlines against sockets that misbehave.
 * (The bridge itself runs inside the real pi in `test/oracle/bridge.test.ts`.)
 */

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import {
  ensurePrivateDir,
  liveDir,
  MAX_SOCKET_PATH_BYTES,
  readAnnouncements,
  removeStaleAnnouncements,
  sameFile,
  socketPathFor,
  UnsafeDirectoryError,
  writeAnnouncement,
} from "../../../src/bridge/announce";
import { BridgeError, connectBridge } from "../../../src/liveBridge/client";
import {
  bridgeInstallPath,
  bridgeStatus,
  compareVersions,
  ForeignBridgeFileError,
  installBridgeFile,
  installedText,
  MARKER_PREFIX,
  parseInstalled,
  removeBridgeFile,
} from "../../../src/liveBridge/installFile";
import { applyLiveState } from "../../../src/liveBridge/liveUsage";
import {
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  isTestedPiVersion,
  parseAnnouncement,
  type Announcement,
  type BridgeState,
} from "../../../src/bridge/protocol";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { SessionFile } from "../../../src/core/read/session";
import { buildGaugeView } from "../../../src/viewModel/statusBar";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bridge-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

/** A pid that is certainly not running (a child that has exited). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

function announcement(over: Partial<Announcement> = {}): Announcement {
  return {
    kind: "pi-context-bridge",
    protocol: BRIDGE_PROTOCOL,
    bridgeVersion: BRIDGE_VERSION,
    piVersion: "1.6.0",
    pid: process.pid,
    sessionFile: "/s.jsonl",
    socket: "/x.sock",
    token: "ab".repeat(32),
    startedAt: 1,
    ...over,
  };
}

describe("announcements", () => {
  it("parses only well-formed announcements", () => {
    assert.deepEqual(
      parseAnnouncement(announcement({ sessionId: "i", cwd: "/w" })),
      announcement({ sessionId: "i", cwd: "/w" }),
    );
    assert.deepEqual(parseAnnouncement({ ...announcement(), token: "not-hex" }), { error: "token malformed" });
    assert.deepEqual(parseAnnouncement({ ...announcement(), kind: "x" }), { error: "kind is not pi-context-bridge" });
    assert.deepEqual(parseAnnouncement({ ...announcement(), pid: -1 }), { error: "pid missing" });
    assert.deepEqual(parseAnnouncement({ ...announcement(), socket: "" }), { error: "socket missing" });
    assert.deepEqual(parseAnnouncement("x"), { error: "not an object" });
  });

  it("keeps the live dir private: created 0700, looser modes tightened, symlinks refused", () => {
    const agent = fresh("agent");
    const file = writeAnnouncement(agent, "1-a", announcement());
    assert.equal(fs.statSync(liveDir(agent)).mode & 0o777, 0o700);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    fs.chmodSync(liveDir(agent), 0o755);
    ensurePrivateDir(liveDir(agent));
    assert.equal(fs.statSync(liveDir(agent)).mode & 0o777, 0o700);
    const link = fresh("link");
    fs.symlinkSync(liveDir(agent), link);
    assert.throws(() => ensurePrivateDir(link), UnsafeDirectoryError);
  });

  it("reads announcements, ignores files others could have written, removes stale ones of dead processes", () => {
    const agent = fresh("agent");
    const sock = path.join(liveDir(agent), "2-b.sock");
    const alive = writeAnnouncement(agent, "1-a", announcement());
    const dead = writeAnnouncement(agent, "2-b", announcement({ pid: deadPid(), socket: sock }));
    const loose = writeAnnouncement(agent, "3-c", announcement());
    fs.chmodSync(loose, 0o666);
    fs.writeFileSync(path.join(liveDir(agent), "4-d.json"), "{broken");
    const reads = readAnnouncements(agent);
    assert.deepEqual(
      reads.map((r) => [path.basename(r.file), "announcement" in r ? "ok" : r.error.split(" ")[0]]),
      [
        ["1-a.json", "ok"],
        ["2-b.json", "ok"],
        ["3-c.json", "not"],
        ["4-d.json", "Expected"],
      ],
    );
    // the dead one goes (its socket too); the broken one only when older than a minute
    const server = net.createServer();
    return new Promise<void>((resolve) =>
      server.listen(sock, () => {
        server.close();
        fs.closeSync(fs.openSync(sock, "a")); // a plain file is never removed as a "socket"
        fs.rmSync(sock);
        assert.deepEqual(removeStaleAnnouncements(agent), [dead]);
        assert.ok(fs.existsSync(alive));
        assert.deepEqual(removeStaleAnnouncements(agent, Date.now() + 120_000), [
          path.join(liveDir(agent), "4-d.json"),
        ]);
        resolve();
      }),
    );
  });

  it("puts sockets in the live dir, or a short private runtime dir when the path would be too long", () => {
    const short = fresh("a");
    assert.equal(socketPathFor(short, "1-x"), path.join(liveDir(short), "1-x.sock"));
    const long = path.join(tmp, "x".repeat(120));
    const runtime = fresh("run");
    fs.mkdirSync(runtime);
    const p = socketPathFor(long, "1-x", "linux", { XDG_RUNTIME_DIR: runtime });
    assert.equal(p, path.join(runtime, "pi-context", "1-x.sock"));
    assert.ok(Buffer.byteLength(p) <= MAX_SOCKET_PATH_BYTES);
    assert.equal(fs.statSync(path.dirname(p)).mode & 0o777, 0o700);
    assert.equal(socketPathFor(long, "1-x", "win32"), "\\\\.\\pipe\\pi-context-bridge-1-x");
  });

  it("compares session files by real path", () => {
    const dir = fresh("d");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "s.jsonl"), "");
    fs.symlinkSync(dir, `${dir}-link`);
    assert.ok(sameFile(path.join(dir, "s.jsonl"), path.join(`${dir}-link`, "s.jsonl")));
    assert.ok(!sameFile(path.join(dir, "s.jsonl"), path.join(dir, "t.jsonl")));
  });

  it("knows which pi versions it is tested with", () => {
    assert.ok(isTestedPiVersion("1.6.0"));
    assert.ok(isTestedPiVersion("1.6.12"));
    assert.ok(!isTestedPiVersion("1.7.0"));
    assert.ok(!isTestedPiVersion("0.6.0"));
  });
});

describe("install marker", () => {
  const body = "// bridge\nexport default function () {}\n";
  it("installs with a marker, recognises current / outdated / newer / modified / foreign files, removes only its own", () => {
    const agent = fresh("agent");
    assert.equal(bridgeStatus(agent, body).state, "missing");
    const { file, before } = installBridgeFile(agent, body);
    assert.equal(before.state, "missing");
    assert.equal(file, bridgeInstallPath(agent));
    const text = fs.readFileSync(file, "utf8");
    assert.ok(text.startsWith(MARKER_PREFIX));
    assert.equal(text, installedText(body));
    assert.deepEqual(parseInstalled(text)?.body, body);
    const current = bridgeStatus(agent, body);
    assert.equal(current.state, "current");
    assert.deepEqual(current.installed, current.shipped);
    assert.equal(current.installed?.version, BRIDGE_VERSION);
    assert.equal(bridgeStatus(agent, body + "// changed\n").state, "outdated");
    // a newer pi-context installed it
    const newer = JSON.parse(text.slice(MARKER_PREFIX.length, text.indexOf("\n")));
    fs.writeFileSync(file, `${MARKER_PREFIX}${JSON.stringify({ ...newer, version: "99.0.0" })}\n${body}`);
    assert.equal(bridgeStatus(agent, body + "x").state, "newer");
    // edited by hand
    fs.writeFileSync(file, text + "// my edit\n");
    assert.equal(bridgeStatus(agent, body).state, "modified");
    installBridgeFile(agent, body);
    assert.equal(bridgeStatus(agent, body).state, "current");
    assert.deepEqual(removeBridgeFile(agent, body).removed, true);
    assert.equal(fs.existsSync(file), false);
    assert.deepEqual(removeBridgeFile(agent, body).removed, false);
    // someone else's file of that name
    fs.writeFileSync(file, "export default function mine() {}\n");
    assert.equal(bridgeStatus(agent, body).state, "foreign");
    assert.throws(() => installBridgeFile(agent, body), ForeignBridgeFileError);
    assert.throws(() => removeBridgeFile(agent, body), ForeignBridgeFileError);
    assert.equal(fs.readFileSync(file, "utf8"), "export default function mine() {}\n");
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ["pi-context-bridge.js"], "no temp files left");
  });

  it("compares versions numerically", () => {
    assert.equal(compareVersions("1.10.0", "1.9.2"), 1);
    assert.equal(compareVersions("1.0", "1.0.0"), 0);
    assert.equal(compareVersions("0.9.9", "1.0.0"), -1);
  });
});

/** A session with one answer of `tokens` usage on the scripted model (window from models.json). */
function sessionWith(tokens: number): SessionFile {
  const lines = [
    { type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" },
    {
      type: "model_change",
      id: "m",
      parentId: null,
      timestamp: "2026-01-01T00:00:00.000Z",
      provider: "scripted",
      modelId: "small",
    },
    {
      type: "message",
      id: "u",
      parentId: "m",
      timestamp: "2026-01-01T00:00:01.000Z",
      message: { role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 },
    },
    {
      type: "message",
      id: "a",
      parentId: "u",
      timestamp: "2026-01-01T00:00:02.000Z",
      message: {
        role: "assistant",
        content: [{ type: "text", text: "ok" }],
        provider: "scripted",
        model: "small",
        api: "openai-completions",
        usage: {
          input: tokens - 10,
          output: 10,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: tokens,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: 2,
      },
    },
  ];
  return SessionFile.fromBytes(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

function agentWith(window: number, settings: object = {}): string {
  const dir = fresh("agent");
  fs.mkdirSync(dir);
  fs.writeFileSync(
    path.join(dir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: "http://127.0.0.1:1/v1",
          api: "openai-completions",
          apiKey: "k",
          models: [{ id: "small", contextWindow: window, maxTokens: 1000 }],
        },
      },
    }),
  );
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
  return dir;
}

function state(over: Partial<BridgeState>): BridgeState {
  return {
    seq: 3,
    at: 0,
    sessionFile: "/s.jsonl",
    leafId: "a",
    idle: true,
    activity: "idle",
    usage: { tokens: 9000, contextWindow: 16000, percent: 56.25 },
    model: { provider: "scripted", id: "small", contextWindow: 16000 },
    compaction: { enabled: true, reserveTokens: 4000, keepRecentTokens: 1000 },
    ...over,
  };
}

describe("pi's live numbers over our analysis", () => {
  const source = { pid: 4242, piVersion: "1.6.0", bridgeVersion: BRIDGE_VERSION };
  it("takes pi's tokens, window and compaction settings, and pi's threshold rule", () => {
    // our view: window 32000 from models.json, default reserve 16384
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(32000) });
    assert.equal(analysis.inspect.contextWindow.value, 32000);
    const live = applyLiveState(analysis, state({}), source);
    const i = live.inspect;
    assert.equal(i.contextTokens, 9000);
    assert.equal(i.usageKnown, true);
    assert.deepEqual(i.contextWindow, { value: 16000, source: "live", detail: "pi 1.6.0, pid 4242" });
    assert.equal(i.percent, 56.25);
    assert.equal(i.reserveTokens.value, 4000);
    assert.equal(i.keepRecentTokens.value, 1000);
    assert.equal(i.threshold, 12000);
    assert.equal(i.tokensUntilCompaction, 3000);
    assert.equal(i.shouldCompact, false);
    assert.equal(i.footer, "56.3%/16k (auto)");
    assert.equal(analysis.inspect.contextTokens, 5000, "input unchanged");
    const over = applyLiveState(
      analysis,
      state({ usage: { tokens: 12001, contextWindow: 16000, percent: 75.00625 } }),
      source,
    ).inspect;
    assert.equal(over.shouldCompact, true);
    assert.equal(
      applyLiveState(
        analysis,
        state({
          usage: { tokens: 12001, contextWindow: 16000, percent: 75 },
          compaction: { enabled: false, reserveTokens: 4000, keepRecentTokens: 1000 },
        }),
        source,
      ).inspect.shouldCompact,
      false,
    );
  });

  it("after a compaction (pi's ?), keeps our estimate as the number and pi's unknown state", () => {
    const analysis = analyzeLoaded(sessionWith(5000), { agentDir: agentWith(16000) });
    const i = applyLiveState(
      analysis,
      state({ usage: { tokens: null, contextWindow: 16000, percent: null } }),
      source,
    ).inspect;
    assert.equal(i.usageKnown, false);
    assert.equal(i.contextTokens, analysis.inspect.contextTokens);
    assert.equal(i.footer, "?/16k (auto)");
  });

  it("shows the live badge in the gauge text, tooltip and screen-reader label", () => {
    const analysis = applyLiveState(
      analyzeLoaded(sessionWith(5000), { agentDir: agentWith(16000) }),
      state({ activity: "streaming", idle: false }),
      source,
    );
    const v = buildGaugeView({
      session: {
        file: "/w/s.jsonl",
        analysis,
        pinned: false,
        updatedAt: 0,
        live: { ...source, activity: "streaming" },
      },
      margin: 1000,
    });
    assert.equal(v.text, "π 56% · 9.0k/16k · live");
    assert.match(v.tooltip, /· \*\*live\*\* from pi 1\.6\.0 \(pid 4242\)/);
    assert.match(
      v.tooltip,
      /\| Live \| the running pi \(pid 4242, pi 1\.6\.0, bridge 1\.0\.0\) reports these numbers; pi is streaming; Compact and Switch run in that pi \|/,
    );
    assert.match(v.tooltip, /\| Window \| 16,000 — the running pi \(pi 1\.6\.0, pid 4242\) \|/);
    assert.match(v.ariaLabel, /^live from the running pi, pi Context 56 percent, 9,000 of 16,000 tokens/);
    const plain = buildGaugeView({
      session: { file: "/w/s.jsonl", analysis, pinned: false, updatedAt: 0 },
      margin: 1000,
    });
    assert.equal(plain.text, "π 56% · 9.0k/16k");
  });
});

describe("client deadlines", () => {
  it("times out on a socket that never says welcome, and refuses another protocol before connecting", async () => {
    const sock = path.join(fresh("s"));
    fs.mkdirSync(sock);
    const socketPath = path.join(sock, "x.sock");
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    try {
      const t0 = Date.now();
      const error = await connectBridge(announcement({ socket: socketPath }), { timeoutMs: 300 }).then(
        () => assert.fail("connected"),
        (e: BridgeError) => e,
      );
      assert.equal(error.code, "timeout");
      assert.match(error.message, /did not answer within 300 ms/);
      assert.ok(Date.now() - t0 < 2000);
      const other = await connectBridge(announcement({ socket: socketPath, protocol: 2 })).then(
        () => assert.fail("connected"),
        (e: BridgeError) => e,
      );
      assert.equal(other.code, "protocol");
    } finally {
      silent.close();
    }
  });

  it("reports a missing socket of a live pid as stale", async () => {
    const error = await connectBridge(announcement({ socket: path.join(tmp, "none.sock") })).then(
      () => assert.fail("connected"),
      (e: BridgeError) => e,
    );
    assert.equal(error.code, "stale");
    assert.match(error.message, /ENOENT/);
  });
});
