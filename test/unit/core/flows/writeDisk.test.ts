/**
 * The write path against real file-system conditions (issue 16, items 6–9): the change check
 * sees a same-size rewrite anywhere in the file and a rename-replace with identical bytes; a disk
 * that fills up mid-append leaves the file byte-identical (a small tmpfs); a read-only, immutable
 * or read-only-mounted file costs no summarizer request; an error after the append succeeded is
 * reported as a written compaction.
 *
 * tmpfs mounts and `chattr +i` need root (Linux); without it those tests are skipped and say why.
 */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { main } from "../../../../src/cli/main";
import { planCompaction, runCompactionFlow, commitCompaction } from "../../../../src/core/flows/compact";
import { commitContextEdits, planContextEdits, runContextEditFlow } from "../../../../src/core/flows/contextEdit";
import { runSwitchFlow } from "../../../../src/core/flows/switch";
import type { Summarizer, SummaryRequest } from "../../../../src/core/flows/summarizer";
import {
  appendEntries,
  expectationHolds,
  expectationOf,
  SessionChangedError,
  SessionWriteError,
  UnsafeSessionWriteError,
} from "../../../../src/core/flows/write";
import { SessionFile } from "../../../../src/core/read/session";
import { startScriptedServer } from "../../../support/scripted-openai";
import { FIXTURES } from "../../../support/paths";
import { SessionBuilder } from "../../../support/session-builder";

const PI = path.join(FIXTURES, "pi-1.6.0");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-write-disk-"));
const mounts: string[] = [];
after(() => {
  for (const m of mounts.reverse()) {
    try {
      execFileSync("umount", [m]);
    } catch {
      // already gone
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** False when small tmpfs mounts and `chattr +i` work here (root on Linux with mount rights), else why not. */
function diskTestsUnavailable(): string | false {
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    return "needs root on Linux (tmpfs mounts, chattr +i); run the unit tests as root to cover it";
  const dir = fs.mkdtempSync(path.join(tmp, "probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return "cannot mount a tmpfs here (no CAP_SYS_ADMIN in this container?); run as root where mounting works";
  }
  try {
    const f = path.join(dir, "f");
    fs.writeFileSync(f, "x");
    execFileSync("chattr", ["+i", f], { stdio: "ignore" });
    execFileSync("chattr", ["-i", f], { stdio: "ignore" });
    return false;
  } catch {
    return "chattr +i does not work on tmpfs here (Linux < 6.0, or no e2fsprogs)";
  } finally {
    execFileSync("umount", [dir], { stdio: "ignore" });
  }
}
const ROOT_ONLY = diskTestsUnavailable();

let n = 0;
/** A copy of a pi fixture in `dir` with an mtime an hour back (the live guard's write age passes). */
function copyFixture(name: string, dir = tmp): string {
  const p = path.join(dir, `${n++}-${name}.jsonl`);
  fs.copyFileSync(path.join(PI, `${name}.jsonl`), p);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(p, old, old);
  return p;
}

/**
 * The long fixture up to the line before pi's last compaction (pi compacted there, so we can),
 * in `dir`, mtime an hour back.
 */
function compactable(dir = tmp): string {
  const lines = fs.readFileSync(path.join(PI, "long.jsonl"), "utf8").split("\n");
  let last = -1;
  lines.forEach((l, i) => {
    if (l.includes('"type":"compaction"')) last = i;
  });
  const p = path.join(dir, `${n++}-long-prefix.jsonl`);
  fs.writeFileSync(p, lines.slice(0, last).join("\n") + "\n");
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(p, old, old);
  return p;
}

/** A small tmpfs of `size` (e.g. `256k`) in a fresh directory. */
function tmpfs(size: string): string {
  const dir = fs.mkdtempSync(path.join(tmp, "mnt-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  mounts.push(dir);
  return dir;
}

/** A session with a tool turn a context edit can omit. */
function editable(): string {
  return new SessionBuilder()
    .system("s")
    .user("u1", "question")
    .assistant("a1", { text: "reading", calls: [{ id: "c1", arguments: { path: "src/a.ts" } }], usage: 500 })
    .result("r1", "c1", "x".repeat(4000))
    .assistant("a2", { text: "done", usage: 1800 })
    .jsonl();
}

/** A summarizer that records the requests it gets and answers with a fixed summary. */
function countingSummarizer(): Summarizer & { requests: SummaryRequest[] } {
  const requests: SummaryRequest[] = [];
  return {
    provider: "test",
    label: "counting summarizer",
    contextWindow: 1_000_000,
    maxOutputTokens: 4096,
    requests,
    async summarize(request) {
      requests.push(request);
      return { text: "## Goal\nA summary.", stopReason: "stop" };
    },
  };
}

const flowOptions = (agentDir: string) => ({
  agentDir,
  projectSettings: "never" as const,
  guardSeconds: 0,
  procRoot: null,
  surface: "cli" as const,
});

describe("the change check: identity and content", () => {
  it("notices a same-size rewrite far from the end (a byte of the header), which size + last 256 bytes did not", async () => {
    const p = copyFixture("long");
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    const bytes = fs.readFileSync(p);
    const at = bytes.indexOf('"timestamp":"') + 14; // a digit of the header's timestamp
    bytes[at] = bytes[at] === 0x31 ? 0x32 : 0x31;
    const fd = fs.openSync(p, "r+"); // in place: same inode, same size, same tail
    fs.writeSync(fd, bytes, at, 1, at);
    fs.closeSync(fd);
    assert.equal(expectationHolds(expectation), false);
    assert.throws(
      () => appendEntries(expectation, [{ type: "custom", id: "q" }]),
      (e: unknown) => e instanceof SessionChangedError && /same size, different bytes/.test((e as Error).message),
    );
    assert.ok(fs.readFileSync(p).equals(bytes), "nothing written");
  });

  it("notices a rename-replace with identical bytes (another inode under the same name)", async () => {
    const p = copyFixture("tree");
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    const bytes = fs.readFileSync(p);
    const replacement = `${p}.new`;
    fs.writeFileSync(replacement, bytes);
    fs.renameSync(replacement, p);
    assert.equal(expectationHolds(expectation), false);
    assert.throws(
      () => appendEntries(expectation, [{ type: "custom", id: "q" }]),
      (e: unknown) => e instanceof SessionChangedError && /replaced/.test((e as Error).message),
    );
    assert.ok(fs.readFileSync(p).equals(bytes));
  });

  it("holds for the untouched file and appends after exactly the bytes read", async () => {
    const p = copyFixture("tree");
    const before = fs.readFileSync(p);
    const s = await SessionFile.open(p, { digest: true });
    const expectation = expectationOf(s);
    assert.equal(expectationHolds(expectation), true);
    const size = appendEntries(expectation, [{ type: "custom", id: "q1" }]);
    const now = fs.readFileSync(p);
    assert.equal(size, now.length);
    assert.ok(now.subarray(0, before.length).equals(before));
    assert.equal(now.subarray(before.length).toString(), '{"type":"custom","id":"q1"}\n');
  });

  it("a switch plan refuses when the file was rewritten in place with the same size while the user decided", async () => {
    const p = copyFixture("tree");
    const session = await SessionFile.open(p);
    const target = session.records[3]!.id;
    let decisions = 0;
    await assert.rejects(
      runSwitchFlow(p, target, { summarize: false }, undefined, flowOptions(path.join(PI, "tree.agent")), {
        decide: async (plan) => {
          decisions++;
          // rewrite a byte in the middle each time the user is asked
          const bytes = fs.readFileSync(p);
          const at = Math.floor(bytes.length / 2);
          const i = bytes.indexOf('"timestamp":"', at) + 14;
          bytes[i] = bytes[i] === 0x31 ? 0x32 : 0x31;
          const fd = fs.openSync(p, "r+");
          fs.writeSync(fd, bytes, i, 1, i);
          fs.closeSync(fd);
          return plan.target.id === target ? { summarize: false } : undefined;
        },
      }),
      SessionChangedError,
    );
    assert.equal(decisions, 3, "re-planned after each change, then gave up");
  });
});

describe("a failed append leaves the file as it was (disk full)", () => {
  it(
    "ENOSPC part-way: the partial bytes are cut off again, the file is byte-identical and synced",
    { skip: ROOT_ONLY },
    async () => {
      const dir = tmpfs("128k");
      const p = copyFixture("tree", dir);
      const before = fs.readFileSync(p);
      // fill the file system up to a few pages
      const filler = path.join(dir, "filler");
      const fd = fs.openSync(filler, "w");
      const block = Buffer.alloc(4096, 0x78);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (error) {
        assert.equal((error as NodeJS.ErrnoException).code, "ENOSPC");
      }
      fs.closeSync(fd);
      fs.truncateSync(filler, fs.statSync(filler).size - 3 * 4096); // 3 pages free
      const s = await SessionFile.open(p, { digest: true });
      const expectation = expectationOf(s);
      const big = { type: "custom", customType: "x", id: "big", data: "y".repeat(64 * 1024) };
      let caught: unknown;
      try {
        appendEntries(expectation, [big]);
      } catch (error) {
        caught = error;
      }
      assert.ok(fs.readFileSync(p).equals(before), "byte-identical after the failed append (no torn line left)");
      assert.ok(caught instanceof SessionWriteError, String(caught));
      assert.equal(caught.code, "ENOSPC");
      assert.equal(caught.restored, true);
      assert.equal(caught.bytesLeft, 0);
      assert.match(caught.message, /failed after [\d,]+ of [\d,]+ bytes \(ENOSPC/);
      assert.match(caught.message, /cut back to its previous [\d,]+ bytes and synced/);
      assert.match(caught.message, /Nothing was written\.$/);
      // and the next append (once there is room) goes right after the original bytes
      fs.rmSync(filler);
      appendEntries(expectation, [{ type: "custom", id: "after" }]);
      assert.equal(fs.readFileSync(p).subarray(before.length).toString(), '{"type":"custom","id":"after"}\n');
    },
  );

  it(
    "`pi-context compact` on a full disk says the file was cut back, exits 1, and the file is intact",
    { skip: ROOT_ONLY },
    async () => {
      const server = await startScriptedServer({ text: `## Goal\n${"a long summary. ".repeat(4000)}` });
      try {
        const dir = tmpfs("512k");
        const p = compactable(dir);
        const before = fs.readFileSync(p);
        const filler = path.join(dir, "filler");
        const fd = fs.openSync(filler, "w");
        try {
          for (;;) fs.writeSync(fd, Buffer.alloc(4096, 0x78));
        } catch {
          // full
        }
        fs.closeSync(fd);
        fs.truncateSync(filler, fs.statSync(filler).size - 2 * 4096);
        const out: string[] = [];
        const err: string[] = [];
        const code = await main(
          [
            "compact",
            p,
            "--yes",
            "--guard-seconds",
            "0",
            "--base-url",
            server.baseURL,
            "--agent-dir",
            path.join(PI, "long.agent"),
          ],
          (s) => out.push(s),
          (s) => err.push(s),
        );
        assert.equal(code, 1);
        assert.match(err.join("\n"), /ENOSPC/);
        assert.match(
          err.join("\n"),
          /cut back to its previous [\d,]+ bytes and synced: it is as before\. Nothing was written\./,
        );
        assert.ok(fs.readFileSync(p).equals(before));
      } finally {
        await server.close();
      }
    },
  );
});

describe("no summarizer request for a file we cannot write", () => {
  for (const [what, prepare] of [
    [
      "immutable (chattr +i)",
      (files: string[]) => {
        for (const f of files) execFileSync("chattr", ["+i", f]);
        return () => files.forEach((f) => execFileSync("chattr", ["-i", f]));
      },
    ],
    [
      "on a read-only mount",
      (files: string[]) => {
        execFileSync("mount", ["-o", "remount,ro", path.dirname(files[0]!)]);
        return () => execFileSync("mount", ["-o", "remount,rw", path.dirname(files[0]!)]);
      },
    ],
  ] as const) {
    it(
      `${what}: compaction, switch and context edits refuse before the preview, nothing is sent`,
      { skip: ROOT_ONLY },
      async () => {
        const dir = tmpfs("4m");
        const p = compactable(dir);
        const edit = path.join(dir, "edit.jsonl");
        fs.writeFileSync(edit, editable());
        const undo = prepare([p, edit]);
        try {
          const before = fs.readFileSync(p);
          const summarizer = countingSummarizer();
          let asked = 0;
          await assert.rejects(
            runCompactionFlow(p, summarizer, flowOptions(path.join(PI, "long.agent")), {
              confirm: async () => {
                asked++;
                return true;
              },
            }),
            (e: unknown) => e instanceof UnsafeSessionWriteError && /cannot be changed/.test((e as Error).message),
          );
          assert.equal(summarizer.requests.length, 0, "no summarizer request");
          assert.equal(asked, 0, "no preview question");
          const plan = await planCompaction(p, { ...flowOptions(path.join(PI, "long.agent")), maxOutputTokens: 4096 });
          assert.match(plan.writeBlocker ?? "", /cannot be changed/);
          const session = await SessionFile.open(p);
          const target = session.records[5]!.id;
          await assert.rejects(
            runSwitchFlow(p, target, { summarize: true }, summarizer, flowOptions(path.join(PI, "long.agent"))),
            UnsafeSessionWriteError,
          );
          assert.equal(summarizer.requests.length, 0);
          let editAsked = 0;
          await assert.rejects(
            runContextEditFlow(edit, [{ action: "omit", targetId: "a1" }], flowOptions(""), {
              confirm: async () => ++editAsked > 0,
            }),
            UnsafeSessionWriteError,
          );
          assert.equal(editAsked, 0, "a context edit is not offered either");
          assert.ok(fs.readFileSync(p).equals(before));
        } finally {
          undo();
        }
      },
    );
  }
});

describe("no summarizer request for a file pi does not open", () => {
  it("a UTF-8 BOM before the header (pi 1.6.0 cannot parse it): compaction, switch and context edits refuse, nothing is sent or written", async () => {
    const bom = (p: string) =>
      fs.writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), fs.readFileSync(p)]));
    const p = compactable();
    bom(p);
    const edit = path.join(tmp, `${n++}-bom-edit.jsonl`);
    fs.writeFileSync(edit, editable());
    bom(edit);
    const before = fs.readFileSync(p);
    const editBefore = fs.readFileSync(edit);
    const summarizer = countingSummarizer();
    let asked = 0;
    const refused = (e: unknown) =>
      e instanceof UnsafeSessionWriteError && /byte order mark.*refusing to write/.test((e as Error).message);
    await assert.rejects(
      runCompactionFlow(p, summarizer, flowOptions(path.join(PI, "long.agent")), {
        confirm: async () => ++asked > 0,
      }),
      refused,
    );
    const session = await SessionFile.open(p);
    assert.equal(session.startsWithBom, true);
    await assert.rejects(
      runSwitchFlow(
        p,
        session.records[5]!.id,
        { summarize: true },
        summarizer,
        flowOptions(path.join(PI, "long.agent")),
      ),
      refused,
    );
    await assert.rejects(
      runContextEditFlow(edit, [{ action: "omit", targetId: "a1" }], flowOptions(""), {
        confirm: async () => ++asked > 0,
      }),
      refused,
    );
    assert.equal(summarizer.requests.length, 0, "no summarizer request");
    assert.equal(asked, 0, "no preview question");
    assert.ok(fs.readFileSync(p).equals(before));
    assert.ok(fs.readFileSync(edit).equals(editBefore));
  });
});

describe("an error after the append succeeded is reported as written", () => {
  /** Make the next `fs.promises.open` of `file` fail as if the file had been moved away right after the write. */
  function moveAwayOnNextOpen(file: string): () => void {
    const original = fs.promises.open;
    (fs.promises as { open: typeof original }).open = (async (p: fs.PathLike, ...rest: unknown[]) => {
      if (String(p) === file) {
        fs.renameSync(file, `${file}.moved`);
        (fs.promises as { open: typeof original }).open = original;
      }
      return (original as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(p, ...rest);
    }) as typeof original;
    return () => ((fs.promises as { open: typeof original }).open = original);
  }

  it("commitCompaction: the file moved right after the write → the result, tokensAfter null, the reason", async () => {
    const p = compactable();
    const plan = await planCompaction(p, { ...flowOptions(path.join(PI, "long.agent")), maxOutputTokens: 4096 });
    const restore = moveAwayOnNextOpen(p);
    try {
      const result = await commitCompaction(plan, { summary: "## Goal\nwritten" });
      assert.equal(result.tokensAfter, null);
      assert.match(result.readBackError ?? "", /ENOENT/);
      const moved = fs.readFileSync(`${p}.moved`, "utf8");
      assert.ok(moved.endsWith(`${JSON.stringify(result.entry)}\n`), "the entry is in the (moved) file");
    } finally {
      restore();
    }
  });

  it("commitContextEdits: the file moved right after the write → the result, tokensAfter null, the reason", async () => {
    const p = path.join(tmp, `${n++}-edit.jsonl`);
    fs.writeFileSync(p, editable());
    const plan = await planContextEdits(p, [{ action: "omit", targetId: "a1" }], { guardSeconds: 0, procRoot: null });
    const restore = moveAwayOnNextOpen(p);
    try {
      const result = await commitContextEdits(plan);
      assert.equal(result.tokensAfter, null);
      assert.equal(result.pairingAfter, null);
      assert.match(result.readBackError ?? "", /ENOENT/);
      assert.equal(result.leafId, result.entries[result.entries.length - 1]!.id);
      assert.ok(fs.readFileSync(`${p}.moved`, "utf8").endsWith(`${JSON.stringify(result.entries.at(-1))}\n`));
    } finally {
      restore();
    }
  });

  it("`pi-context compact`: prints what was written and exits 0, never “Nothing was written”", async () => {
    const server = await startScriptedServer({ text: "## Goal\nCLI summary." });
    const p = compactable();
    let restore = () => {};
    try {
      const out: string[] = [];
      const err: string[] = [];
      // the first open after the write (the read-back) finds the file moved away
      const original = fs.promises.open;
      const sizeBefore = fs.statSync(p).size;
      (fs.promises as { open: typeof original }).open = (async (f: fs.PathLike, ...rest: unknown[]) => {
        if (String(f) === p && fs.existsSync(p) && fs.statSync(p).size > sizeBefore) fs.renameSync(p, `${p}.moved`);
        return (original as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(f, ...rest);
      }) as typeof original;
      restore = () => ((fs.promises as { open: typeof original }).open = original);
      const code = await main(
        [
          "compact",
          p,
          "--yes",
          "--guard-seconds",
          "0",
          "--base-url",
          server.baseURL,
          "--agent-dir",
          path.join(PI, "long.agent"),
        ],
        (s) => out.push(s),
        (s) => err.push(s),
      );
      restore();
      assert.equal(code, 0, err.join("\n"));
      const text = out.join("\n");
      assert.match(text, /^Compacted: wrote compaction [0-9a-f]{8} after entry /m);
      assert.match(text, /Tokens: [\d,]+ → unknown/);
      assert.match(text, /the compaction is written, but the file could not be read back/);
      assert.doesNotMatch(text + err.join("\n"), /Nothing was written/);
    } finally {
      restore();
      await server.close();
    }
  });
});
