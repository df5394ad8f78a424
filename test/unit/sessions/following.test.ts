import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { Following } from "../../../src/sessions/following";

describe("Following.terminalPid: the pi in the followed terminal, for the session it has open", () => {
  it("gives the pid for that session's file (paths compared resolved), nothing for other files or no terminal", () => {
    const f = new Following();
    assert.equal(f.terminalPid("/s/a.jsonl"), undefined);
    f.terminal = {
      terminal: "bash",
      pi: { pid: 4242, ppid: 1, argv: ["pi"], startTime: 0, cwd: "/w" } as never,
      file: "/s/./a.jsonl",
    };
    assert.equal(f.terminalPid("/s/a.jsonl"), 4242);
    assert.equal(f.terminalPid("/s/b.jsonl"), undefined);
    f.terminal = { terminal: "bash", pi: { pid: 4243 } as never };
    assert.equal(f.terminalPid("/s/a.jsonl"), undefined, "a pi whose session is not known");
  });
});
