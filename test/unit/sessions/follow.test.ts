import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { attributeSession } from "../../../src/core/proc/attribute";
import type { PiProcess } from "../../../src/core/proc/table";
import { chooseInFolder, LIVE_WINDOW_MS, type FollowInput } from "../../../src/sessions/follow";
import type { FoundSession } from "../../../src/sessions/scan";

const now = 1_000_000_000;
const s = (file: string, ageMs: number, folderIndex = 0): FoundSession => ({
  file,
  size: 1,
  dev: 1,
  ino: 1,
  mtimeMs: now - ageMs,
  cwd: "/w",
  folderIndex,
});
const input = (
  sessions: FoundSession[],
  firstSeen: Record<string, number> = {},
  running: string[] = [],
): FollowInput => ({
  sessions: [...sessions].sort((a, b) => b.mtimeMs - a.mtimeMs),
  now,
  running: new Set(running),
  firstSeen: new Map(Object.entries(firstSeen)),
});

describe("following a folder's session without flapping", () => {
  it("two sessions written in turn: the followed one stays, whichever was written last", () => {
    let choice = chooseInFolder(input([s("A", 1000), s("B", 5000)], { A: 0, B: 0 }), 0, undefined);
    assert.deepEqual(choice, { file: "A", since: now });
    // B is written (now newer), A was written 2 s ago: still A
    for (const [a, b] of [
      [2000, 100],
      [100, 2000],
      [3000, 50],
    ]) {
      choice = chooseInFolder(input([s("A", a!), s("B", b!)], { A: 0, B: 0 }), 0, choice);
      assert.equal(choice!.file, "A");
    }
  });

  it("a new session (pi /new, another pi) is followed; an idle followed session gives way to the newest", () => {
    const first = { file: "A", since: now - 10_000 };
    assert.equal(chooseInFolder(input([s("A", 100), s("N", 50)], { A: 0, N: now - 1000 }), 0, first)!.file, "N");
    assert.equal(chooseInFolder(input([s("A", LIVE_WINDOW_MS + 5), s("B", 50)], { A: 0, B: 0 }), 0, first)!.file, "B");
    // a running pi keeps an idle session live
    assert.equal(
      chooseInFolder(input([s("A", LIVE_WINDOW_MS + 5), s("B", 50)], { A: 0, B: 0 }, ["A"]), 0, first)!.file,
      "A",
    );
    // each folder on its own
    assert.equal(chooseInFolder(input([s("A", 5, 0), s("X", 1, 1)]), 1, undefined)!.file, "X");
    assert.equal(chooseInFolder(input([s("A", 5, 0)]), 1, undefined), undefined);
  });
});

describe("which session a pi has open, from the process table", () => {
  const pi = (pid: number, startedAt: number, extra: Partial<PiProcess> = {}): PiProcess => ({
    pid,
    ppid: 1,
    argv: ["pi"],
    command: "pi",
    cwd: "/w",
    startedAt,
    ...extra,
  });
  const session = (file: string, created: number, mtimeMs: number, cwd = "/w") => ({
    file,
    cwd,
    created,
    mtimeMs,
    id: file,
  });

  it("two pis in one folder: each gets the session it started (the later start owns later headers)", () => {
    const p1 = pi(1, 1000);
    const p2 = pi(2, 2500);
    const sessions = [session("S1", 1400, 9000), session("S2", 2900, 9500), session("old", 100, 500)];
    assert.deepEqual(attributeSession(p1, [p2], sessions), { file: "S1", how: "started-here" });
    assert.deepEqual(attributeSession(p2, [p1], sessions), { file: "S2", how: "started-here" });
  });

  it("--session path or id, a resumed session written since the start, claimed files, another folder", () => {
    assert.deepEqual(attributeSession(pi(1, 0, { sessionArg: "x/s.jsonl" }), [], []), {
      file: "/w/x/s.jsonl",
      how: "session-argument",
    });
    assert.deepEqual(attributeSession(pi(1, 0, { sessionArg: "S" }), [], [session("S1", 0, 0)]), {
      file: "S1",
      how: "session-argument",
    });
    const resumed = [session("old", 100, 5000), session("older", 50, 900)];
    assert.deepEqual(attributeSession(pi(1, 1000), [], resumed), { file: "old", how: "written-since-start" });
    assert.equal(attributeSession(pi(1, 1000), [], resumed, new Set(["old"])), undefined);
    assert.equal(attributeSession(pi(1, 1000, { cwd: "/elsewhere" }), [], resumed), undefined);
    assert.equal(attributeSession(pi(1, 1000, { cwd: undefined }), [], resumed), undefined);
  });
});
