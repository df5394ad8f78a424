/**
 * One live-session guard for every writing flow (`checkSessionLive`, fixes3 item 7): a pi started
 * with `--session <id prefix>` of this session has it open wherever it runs, so compaction,
 * switch, label, name, context edit and repair all refuse — before, only naming a session passed
 * the header's id to the guard, and the other flows let such a pi (in another folder) through.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { planCompaction } from "../../../../src/core/flows/compact";
import { planContextEdits } from "../../../../src/core/flows/contextEdit";
import { appendLabelChange } from "../../../../src/core/flows/label";
import { LiveSessionError } from "../../../../src/core/access/words";
import { appendSessionName } from "../../../../src/core/flows/name";
import { planSessionRepair } from "../../../../src/core/flows/repair";
import { planSwitch } from "../../../../src/core/flows/switch";
import { GUARD_PROCESSES_ENV } from "../../../../src/core/proc/guardTable";
import { FIXTURES } from "../../../support/paths";

const PI = path.join(FIXTURES, "pi-1.6.0");
const AGENT = path.join(PI, "tree.agent");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-live-guard-"));
const saved = process.env[GUARD_PROCESSES_ENV];

describe("every writing flow: a pi with --session <id prefix> elsewhere has the session open", () => {
  let file: string;
  let long: string;
  before(() => {
    file = path.join(tmp, "tree.jsonl");
    fs.copyFileSync(path.join(PI, "tree.jsonl"), file);
    long = path.join(tmp, "long.jsonl");
    // the long fixture up to its second compaction: something to compact
    const lines = fs.readFileSync(path.join(PI, "long.jsonl"), "utf8").split("\n");
    const second = lines.map((l, i) => (l.includes('"type":"compaction"') ? i : -1)).filter((i) => i >= 0)[1]!;
    fs.writeFileSync(long, lines.slice(0, second).join("\n") + "\n");
    const idOf = (f: string) => JSON.parse(fs.readFileSync(f, "utf8").split("\n")[0]!).id as string;
    // pi in another folder, resumed with each session's id (pi's `--session <id prefix>`)
    const pi = (pid: number, id: string) => ({
      pid,
      ppid: 1,
      argv: ["pi", "--session", id],
      command: `pi --session ${id}`,
      cwd: "/somewhere/else",
      sessionArg: id,
    });
    process.env[GUARD_PROCESSES_ENV] = JSON.stringify([pi(424242, idOf(file)), pi(434343, idOf(long))]);
  });
  after(() => {
    if (saved === undefined) delete process.env[GUARD_PROCESSES_ENV];
    else process.env[GUARD_PROCESSES_ENV] = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const options = { guardSeconds: 0, surface: "cli" as const };
  const refused = (e: unknown) => e instanceof LiveSessionError && /424242/.test(e.message);

  it("compaction, switch, context edit and repair plans see it as live", async () => {
    const compaction = await planCompaction(long, {
      ...options,
      agentDir: path.join(PI, "long.agent"),
      maxOutputTokens: 1024,
    });
    assert.equal(compaction.access.strength, "probable", "compaction");
    const sw = await planSwitch(file, "895e5ef5", { ...options, agentDir: AGENT });
    assert.equal(sw.access.strength, "probable", "switch");
    const edit = await planContextEdits(file, [], options);
    assert.equal(edit.access.strength, "probable", "context edit");
    const repair = await planSessionRepair(file, { ...options, agentDir: AGENT });
    assert.equal(repair.access.strength, "probable", "repair");
  });

  it("label and name refuse, and nothing is written", async () => {
    const before = fs.readFileSync(file);
    await assert.rejects(appendLabelChange(file, "895e5ef5", "x", options), refused);
    await assert.rejects(appendSessionName(file, "x", options), refused);
    assert.ok(fs.readFileSync(file).equals(before));
  });
});
