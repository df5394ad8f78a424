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
  liveDir,
  MAX_SOCKET_PATH_BYTES,
  readAnnouncements,
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
