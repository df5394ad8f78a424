/**
 * Issue 16.5: only regular files are read. A FIFO would block an open or a read forever (no
 * writer), a device like `/dev/zero` never ends, a directory is no session: each is refused at
 * once with a message naming what it is — by `SessionFile` (open, refresh, re-reading a line), the
 * session listing (`readSessionInfo`, the catalog), the session scanner's header probe and the CLI.
 */

import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { NotARegularFileError, openRegularSync } from "../../../../src/core/read/disk";
import { SessionCatalog } from "../../../../src/core/read/catalog";
import { readSessionInfo } from "../../../../src/core/read/sessionInfo";
import { SessionFile } from "../../../../src/core/read/session";
import { readHeader } from "../../../../src/sessions/scan";
import { REPO_ROOT } from "../../../support/paths";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-regular-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const posix = process.platform !== "win32";
const HEADER = `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "t", cwd: "/tmp" })}\n`;

function fifo(name: string): string {
  const file = path.join(tmp, name);
  execFileSync("mkfifo", [file]);
  return file;
}

/** Every kind of non-regular file this platform has, with the word the message must use. */
function specials(): [string, string][] {
  const out: [string, string][] = [[tmp, "a directory"]];
  if (posix) {
    out.push([fifo(`p${Math.random().toString(16).slice(2)}.jsonl`), "a FIFO"]);
    out.push(["/dev/zero", "a character device"]);
  }
  return out;
}

describe("only regular files are read (issue 16.5)", { timeout: 20_000 }, () => {
  it("SessionFile.open refuses FIFOs, devices and directories at once, with what they are", async () => {
    for (const [file, kind] of specials()) {
      await assert.rejects(SessionFile.open(file), (error: unknown) => {
        assert.ok(error instanceof NotARegularFileError, String(error));
        assert.match(error.message, new RegExp(`is ${kind}.*not a regular file`));
        return true;
      });
      assert.throws(() => openRegularSync(file), NotARegularFileError);
    }
  });

  it("refresh refuses a session file replaced by a FIFO", { skip: !posix }, async () => {
    const file = path.join(tmp, "replaced.jsonl");
    fs.writeFileSync(file, HEADER);
    const session = await SessionFile.open(file);
    fs.rmSync(file);
    execFileSync("mkfifo", [file]);
    await assert.rejects(session.refresh(), NotARegularFileError);
  });

  it("the session summary and the scanner's header probe skip them instead of hanging", async () => {
    for (const [file] of specials()) {
      await assert.rejects(readSessionInfo(file), NotARegularFileError);
      assert.equal(await new SessionCatalog().info(file), undefined);
      assert.deepEqual(await readHeader(file), { state: "incomplete" });
    }
  });

  it("pi-context inspect exits with the message, promptly", { skip: !posix }, () => {
    const cli = path.join(REPO_ROOT, "out/src/cli/main.js");
    for (const [file, kind] of specials()) {
      const run = spawnSync(process.execPath, [cli, "inspect", file], { encoding: "utf8", timeout: 10_000 });
      assert.notEqual(run.signal, "SIGTERM", `inspect ${file} did not finish`);
      assert.notEqual(run.status, 0);
      assert.match(run.stderr + run.stdout, new RegExp(`is ${kind}`));
    }
  });
});
