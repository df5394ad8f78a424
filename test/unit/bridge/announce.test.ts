/**
 * The live bridge's announcement files and private directories (`src/bridge/announce.ts`) and the
 * protocol's checks (`src/bridge/protocol.ts`), in plain Node. (The bridge itself runs inside the
 * real pi in `test/conformance/bridge.test.ts`.)
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
  isBridgeSocketPath,
  liveDir,
  MAX_SOCKET_PATH_BYTES,
  readAnnouncements,
  removeAnnouncement,
  removeStaleAnnouncements,
  sameFile,
  socketPathFor,
  UnsafeDirectoryError,
  writeAnnouncement,
} from "../../../src/bridge/announce";
import { isTestedPiVersion, parseAnnouncement } from "../../../src/bridge/protocol";
import { announcement } from "../../support/announcement";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-bridge-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

/** A pid that is certainly not running (a child that has exited). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
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
    const sock = (name: string) => path.join(liveDir(agent), `${name}.sock`);
    const alive = writeAnnouncement(agent, "1-a", announcement({ socket: sock("1-a") }));
    const dead = writeAnnouncement(agent, "2-b", announcement({ pid: deadPid(), socket: sock("2-b") }));
    const loose = writeAnnouncement(agent, "3-c", announcement({ socket: sock("3-c") }));
    fs.chmodSync(loose, 0o666);
    fs.writeFileSync(path.join(liveDir(agent), "4-d.json"), "{broken", { mode: 0o600 });
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
    // the dead one goes (its socket too); a malformed file is never ours (we write by rename): it stays
    const server = net.createServer();
    return new Promise<void>((resolve) =>
      server.listen(sock("2-b"), () => {
        server.close();
        fs.closeSync(fs.openSync(sock("2-b"), "a")); // a plain file is never removed as a "socket"
        fs.rmSync(sock("2-b"));
        assert.deepEqual(removeStaleAnnouncements(agent), [dead]);
        assert.ok(fs.existsSync(alive));
        const temp = path.join(liveDir(agent), ".9-ab.0123abcd.tmp");
        fs.writeFileSync(temp, "{", { mode: 0o600 });
        assert.deepEqual(removeStaleAnnouncements(agent, Date.now() + 120_000), [temp], "only our old temp file");
        assert.ok(fs.existsSync(path.join(liveDir(agent), "4-d.json")));
        resolve();
      }),
    );
  });

  it("trusts only 0600 announcements of this user in a private live dir (a 0644 checkout is ignored)", () => {
    const agent = fresh("agent");
    const good = announcement({ socket: path.join(liveDir(agent), "1-a.sock") });
    const file = writeAnnouncement(agent, "1-a", good);
    assert.ok("announcement" in readAnnouncements(agent)[0]!);
    fs.chmodSync(file, 0o644); // what `git checkout` gives a committed file
    assert.match((readAnnouncements(agent)[0] as { error: string }).error, /^not private to this user/);
    fs.chmodSync(file, 0o640);
    assert.match((readAnnouncements(agent)[0] as { error: string }).error, /^not private/);
    fs.chmodSync(file, 0o600);
    fs.chmodSync(liveDir(agent), 0o755); // a live dir others can read: nothing in it is used
    const reads = readAnnouncements(agent);
    assert.equal(reads.length, 1);
    assert.match((reads[0] as { error: string }).error, /the live dir is readable or writable by others/);
    fs.chmodSync(liveDir(agent), 0o700);
    const real = fresh("real");
    fs.mkdirSync(real, { mode: 0o700 });
    const linked = fresh("agent-linked");
    fs.mkdirSync(path.join(linked, "pi-context"), { recursive: true });
    fs.symlinkSync(real, liveDir(linked)); // the live dir as a symlink
    fs.writeFileSync(path.join(real, "1-a.json"), JSON.stringify(good), { mode: 0o600 });
    assert.match((readAnnouncements(linked)[0] as { error: string }).error, /not a directory \(or a symlink\)/);
  });

  it("a socket path must be a bridge socket in the live dir or our runtime dirs", () => {
    const agent = fresh("agent");
    const uid = process.getuid?.() ?? 0;
    const env = { XDG_RUNTIME_DIR: "/run/user/1000" };
    const ok = [
      path.join(liveDir(agent), "123-abcdef.sock"),
      "/run/user/1000/pi-context/123-abcdef.sock",
      path.join(os.tmpdir(), `pi-context-${uid}`, "9-0a.sock"),
      `/tmp/pi-context-${uid}/9-0a.sock`,
    ];
    const refused = [
      `${process.env.HOME ?? "/root"}/.ssh/agent.sock`,
      "/var/run/docker.sock",
      "/run/user/1000/ssh-agent.sock",
      path.join(liveDir(agent), "..", "123-abcdef.sock"),
      path.join(liveDir(agent), "sub", "123-abcdef.sock"),
      path.join(liveDir(agent), "agent.sock"),
      path.join(liveDir(agent), "123-abcdef.json"),
      "123-abcdef.sock",
      `/tmp/pi-context-${uid + 1}/9-0a.sock`,
    ];
    for (const p of ok) assert.equal(isBridgeSocketPath(agent, p, "linux", env), true, p);
    for (const p of refused) assert.equal(isBridgeSocketPath(agent, p, "linux", env), false, p);
    assert.equal(isBridgeSocketPath(agent, "\\\\.\\pipe\\pi-context-bridge-12-ab", "win32"), true);
    assert.equal(isBridgeSocketPath(agent, "\\\\.\\pipe\\openssh-ssh-agent", "win32"), false);
    assert.equal(isBridgeSocketPath(agent, "\\\\server\\pipe\\pi-context-bridge-12-ab", "win32"), false);
    const planted = writeAnnouncement(agent, "5-e", announcement({ socket: "/var/run/docker.sock" }));
    assert.match(
      (readAnnouncements(agent).find((r) => r.file === planted) as { error: string }).error,
      /not a live bridge socket \(\/var\/run\/docker\.sock\)/,
    );
  });

  it("a planted announcement of a dead process never makes us unlink its socket (an SSH agent's, say)", () => {
    const agent = fresh("agent");
    const elsewhere = fresh("ssh");
    fs.mkdirSync(elsewhere);
    const victim = path.join(elsewhere, "agent.sock");
    const server = net.createServer();
    return new Promise<void>((resolve) =>
      server.listen(victim, () => {
        const planted = writeAnnouncement(agent, "7-ff", announcement({ pid: deadPid(), socket: victim }));
        removeStaleAnnouncements(agent);
        removeAnnouncement(agent, planted, victim);
        assert.ok(fs.lstatSync(victim).isSocket(), "the foreign socket is still there");
        server.close(() => resolve());
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
