/**
 * pi-context's own last write (`core/access/ownWrites.ts`): recognised in this process and in
 * another pi-context process (a later CLI run), forgotten as soon as anyone else writes.
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  isOwnLastWrite,
  ownWriteChecker,
  recordOwnWrite,
  recordOwnWriteOf,
  stateDir,
} from "../../../../src/core/access/ownWrites";

const stateOf = (file: string) => {
  const s = fs.statSync(file);
  return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
};

describe("our own last write", () => {
  it("is ours in this process and in another one; an append by someone else ends it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-own-"));
    try {
      const file = path.join(dir, "s.jsonl");
      fs.writeFileSync(file, "{}\n");
      assert.equal(isOwnLastWrite(file, stateOf(file)), false);
      recordOwnWriteOf(file);
      assert.equal(isOwnLastWrite(file, stateOf(file)), true);
      // another pi-context process (same state dir) sees the record
      const module = path.join(__dirname, "../../../../src/core/access/ownWrites.js");
      const other = execFileSync(
        process.execPath,
        [
          "-e",
          `const o=require(${JSON.stringify(module)});const s=require("fs").statSync(process.argv[1]);process.stdout.write(String(o.isOwnLastWrite(process.argv[1],{size:s.size,mtimeMs:s.mtimeMs,ino:s.ino})))`,
          file,
        ],
        { env: process.env },
      ).toString();
      assert.equal(other, "true");
      fs.appendFileSync(file, "{}\n");
      assert.equal(isOwnLastWrite(file, stateOf(file)), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a file we created is ours until anyone writes to it; an append of ours is not a creation", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-own-"));
    try {
      const made = path.join(dir, "fork.jsonl");
      fs.writeFileSync(made, "{}\n");
      recordOwnWrite(made, stateOf(made), { created: true });
      assert.equal(ownWriteChecker()(made, stateOf(made)), "created");
      const appended = path.join(dir, "s.jsonl");
      fs.writeFileSync(appended, "{}\n");
      recordOwnWriteOf(appended);
      assert.equal(ownWriteChecker()(appended, stateOf(appended)), "appended");
      fs.appendFileSync(made, "{}\n");
      assert.equal(ownWriteChecker()(made, stateOf(made)), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lives in the state folder ($PI_CONTEXT_STATE_DIR, else XDG_STATE_HOME, else ~/.local/state)", () => {
    assert.equal(stateDir({ PI_CONTEXT_STATE_DIR: "/x" }, "linux"), "/x");
    assert.equal(stateDir({ XDG_STATE_HOME: "/st" }, "linux"), path.join("/st", "pi-context"));
    assert.equal(stateDir({}, "linux"), path.join(os.homedir(), ".local", "state", "pi-context"));
    assert.equal(stateDir({ LOCALAPPDATA: "C:\\L" }, "win32"), path.join("C:\\L", "pi-context"));
  });
});
