/**
 * The access model (`core/access/access.ts`): each kind of evidence, what wins when they conflict,
 * and the "N live" count — over fixed process tables, announcements and sessions.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { judgeAccess, liveAmong, type AccessInput, type AnnouncedPi } from "../../../../src/core/access/access";
import type { AttributableSession } from "../../../../src/core/proc/attribute";
import type { PiProcess, ProcessSnapshot } from "../../../../src/core/proc/types";

const T = 1_800_000_000_000; // a pi's start
const pi = (pid: number, more: Partial<PiProcess> = {}): PiProcess => ({
  pid,
  ppid: 1,
  argv: ["pi"],
  command: "pi",
  cwd: "/w",
  startedAt: T,
  ...more,
});
/** A process table read ten minutes after the pis started (after every session below began). */
const table = (...pis: PiProcess[]): ProcessSnapshot => ({
  at: T + 600_000,
  platform: "linux",
  processes: pis,
  pi: pis,
});
const session = (file: string, created: number, mtimeMs: number, id = file.slice(-6)): AttributableSession => ({
  file,
  cwd: "/w",
  id,
  created,
  mtimeMs,
});

/** Sessions A and B of folder /w, both written after pi 100 started; A was started by it. */
const A = session("/s/--w--/a.jsonl", T + 1_000, T + 60_000, "aaaaaa");
const B = session("/s/--w--/b.jsonl", T - 3_600_000, T + 50_000, "bbbbbb");

function input(file: AttributableSession, more: Partial<AccessInput> = {}): AccessInput {
  return {
    file: file.file,
    header: { cwd: file.cwd, id: file.id },
    ageSeconds: 3600,
    guardSeconds: 30,
    ownLastWrite: false,
    announced: [],
    snapshot: table(),
    siblings: [A, B],
    ignorePids: [],
    ...more,
  };
}

describe("who has a session open", () => {
  it("a pi whose bridge announces the session: certain", () => {
    const announced: AnnouncedPi[] = [{ pid: 100, sessionFile: A.file, piVersion: "1.6.0" }];
    const a = judgeAccess(input(A, { announced, snapshot: table(pi(100)) }));
    assert.equal(a.strength, "certain");
    assert.deepEqual(a.evidence, [{ kind: "bridge", strength: "certain", pid: 100, piVersion: "1.6.0" }]);
  });

  it("a pi whose bridge announces another session does not have this one, whatever the table suggests", () => {
    // pi 100 runs in B's folder and B was written since it started: without the bridge, the table's
    // rule would tie it to B (issue 40's false refusal)
    const announced: AnnouncedPi[] = [{ pid: 100, sessionFile: "/s/--w--/c.jsonl" }];
    const b = judgeAccess(input(B, { announced, snapshot: table(pi(100)) }));
    assert.equal(b.strength, "none");
    assert.deepEqual(b.evidence, []);
  });

  it("a pi without the bridge that the table ties to the session: probable (and not to the other one)", () => {
    const a = judgeAccess(input(A, { snapshot: table(pi(100)) }));
    assert.deepEqual(
      a.evidence.map((e) => e.kind === "process" && [e.pid, e.how, e.strength]),
      [[100, "started-here", "probable"]],
    );
    // B was written since pi 100 started, but pi 100 started A: it has A, not B
    assert.equal(judgeAccess(input(B, { snapshot: table(pi(100)) })).strength, "none");
  });

  it("a pi in the folder whose session cannot be told: possible (it may have resumed this one)", () => {
    const old = session("/s/--w--/old.jsonl", T - 7_200_000, T - 3_600_000, "oooooo");
    const a = judgeAccess(input(old, { siblings: [old], snapshot: table(pi(100)) }));
    assert.deepEqual(
      a.evidence.map((e) => e.kind === "process" && [e.pid, e.how, e.strength]),
      [[100, "in-folder", "possible"]],
    );
    // a pi in another folder is no evidence
    assert.equal(
      judgeAccess(input(old, { siblings: [old], snapshot: table(pi(100, { cwd: "/x" })) })).strength,
      "none",
    );
  });

  it("Windows: a pi whose folder cannot be read is possible evidence, unless it names another session", () => {
    const windows = pi(7, { cwd: undefined, startedAt: undefined });
    assert.deepEqual(
      judgeAccess(input(B, { snapshot: table(windows) })).evidence.map((e) => e.kind === "process" && e.how),
      ["unknown-cwd"],
    );
    const other = pi(7, { cwd: undefined, startedAt: undefined, sessionArg: "zzzz" });
    assert.equal(judgeAccess(input(B, { snapshot: table(other) })).strength, "none");
    const mine = pi(7, { cwd: undefined, startedAt: undefined, sessionArg: "bbb" });
    assert.deepEqual(
      judgeAccess(input(B, { snapshot: table(mine) })).evidence.map((e) => e.kind === "process" && [e.how, e.strength]),
      [["session-argument", "probable"]],
    );
  });

  it("a recent write by someone else: possible; our own last write: nothing", () => {
    const recent = judgeAccess(input(B, { ageSeconds: 3 }));
    assert.deepEqual(recent.evidence, [
      { kind: "recent-write", strength: "possible", ageSeconds: 3, guardSeconds: 30 },
    ]);
    assert.equal(judgeAccess(input(B, { ageSeconds: 3, ownLastWrite: true })).strength, "none");
    assert.equal(judgeAccess(input(B, { ageSeconds: 3, guardSeconds: 0 })).strength, "none", "guard off");
    assert.equal(judgeAccess(input(B, { ageSeconds: 31 })).strength, "none");
  });

  it("the strongest evidence leads; the access lists every one", () => {
    const announced: AnnouncedPi[] = [{ pid: 100, sessionFile: A.file }];
    const a = judgeAccess(
      input(A, { announced, snapshot: table(pi(100), pi(200, { cwd: "/w", startedAt: T + 500 })), ageSeconds: 1 }),
    );
    assert.deepEqual(
      a.evidence.map((e) => [e.kind, e.strength]),
      [
        ["bridge", "certain"],
        ["recent-write", "possible"],
      ],
      "pi 200 is tied to B (written since it started): A's bridge claim keeps it off A",
    );
  });

  it("a stale announcement (its pi not in a readable table) is no evidence; without a table it is trusted", () => {
    const announced: AnnouncedPi[] = [{ pid: 999, sessionFile: A.file }];
    assert.equal(judgeAccess(input(A, { announced, snapshot: table(pi(100, { cwd: "/x" })) })).strength, "none");
    const blind = judgeAccess(input(A, { announced, snapshot: undefined }));
    assert.equal(blind.strength, "certain");
    assert.equal(blind.processChecked, false);
    // a running process the pi rule does not recognise (a launcher): its announcement stands
    const launcher: ProcessSnapshot = {
      ...table(pi(100, { cwd: "/x" })),
      processes: [pi(100, { cwd: "/x" }), { pid: 999, ppid: 1, argv: ["my-pi-wrapper"], command: "my-pi-wrapper" }],
    };
    assert.equal(judgeAccess(input(A, { announced, snapshot: launcher })).strength, "certain");
  });

  it("pi-context's own pid is ignored", () => {
    assert.equal(judgeAccess(input(A, { snapshot: table(pi(100)), ignorePids: [100] })).strength, "none");
  });
});

describe("the N live count (liveAmong)", () => {
  it("issue 40's scenario: pi A with the bridge, B written recently by a pi that quit → one live session", () => {
    const live = liveAmong(
      [A, B],
      { announced: [{ pid: 100, sessionFile: A.file }], snapshot: table(pi(100)), ignorePids: [] },
      T + 60_000,
    );
    assert.deepEqual([...live.keys()], [A.file]);
  });

  it("two pis without the bridge, each tied to its session → both live", () => {
    const C = session("/s/--w--/c.jsonl", T + 2_000, T + 55_000, "cccccc");
    const live = liveAmong(
      [A, C],
      { announced: [], snapshot: table(pi(100), pi(200, { startedAt: T + 1_500 })), ignorePids: [] },
      T + 60_000,
    );
    assert.deepEqual([...live.keys()].sort(), [A.file, C.file]);
  });

  it("a session begun after the process table was read is not judged from it (its pi may be missing there)", () => {
    // pi 200 started and began C after the table pi 100 is in was read: C is not pi 100's
    const C = session("/s/--w--/c.jsonl", T + 700_000, T + 700_000, "cccccc");
    const early = { ...table(pi(100)), at: T + 650_000 };
    const live = liveAmong([A, C], { announced: [], snapshot: early, ignorePids: [] }, T + 700_500);
    assert.deepEqual([...live.keys()], [A.file]);
    // read after C began, the same table gives C to pi 100 (the newest session it started)
    const later = { ...table(pi(100)), at: T + 700_100 };
    assert.deepEqual(
      [...liveAmong([A, C], { announced: [], snapshot: later, ignorePids: [] }, T + 700_500).keys()],
      [C.file],
    );
  });

  it("a fork or clone pi-context made (ours, unwritten since) is no pi's: the session pi has open stays live", () => {
    // pi 100 runs on B (hidden --session); the clone was created after pi started, as pi's own /fork would be
    const clone = { ...session("/s/--w--/clone.jsonl", T + 30_000, T + 30_000, "cl0ne0"), ours: true };
    const facts = { announced: [], snapshot: table(pi(100)), ignorePids: [] };
    assert.deepEqual([...liveAmong([B, clone], facts, T + 60_000).keys()], [B.file]);
    assert.equal(judgeAccess(input(B, { siblings: [B, clone], snapshot: table(pi(100)) })).strength, "probable");
    assert.equal(judgeAccess(input(clone, { siblings: [B, clone], snapshot: table(pi(100)) })).strength, "none");
    // once pi writes to it (pi resumed it), it is a candidate again
    const written = { ...clone, ours: false, mtimeMs: T + 59_000 };
    assert.deepEqual([...liveAmong([B, written], facts, T + 60_000).keys()], [written.file]);
  });

  it("no process table: a session written within the minute counts (nothing better to go by)", () => {
    const live = liveAmong([A, B], { announced: [], snapshot: undefined, ignorePids: [] }, T + 115_000);
    assert.deepEqual([...live.keys()], [A.file], "A written 55 s ago, B 65 s ago");
    // our own last write is nobody's recent write
    const ours = liveAmong(
      [{ ...A, ownLastWrite: true }, B],
      { announced: [], snapshot: undefined, ignorePids: [] },
      T + 115_000,
    );
    assert.deepEqual([...ours.keys()], []);
  });
});
