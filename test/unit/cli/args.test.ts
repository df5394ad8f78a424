/**
 * `parseArgs` (src/cli/args.ts, over Node's util.parseArgs): the README's "Command line" rules — a
 * flag's value is the next argument unless that is a flag itself, `--note=--text`, `--` ends the
 * flags, unknown flags and flags without their value are usage errors (exit 2).
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { parseArgs, UsageError, type ParsedArgs } from "../../../src/cli/args";
import { runCli } from "../../support/cli";

const BOOLEANS = new Set(["dry-run", "json", "yes"]);
const parsed = (argv: string[]) => {
  const a: ParsedArgs = parseArgs(argv, BOOLEANS);
  return { positional: a.positional, flags: Object.fromEntries(a.flags), missingValue: a.missingValue };
};

describe("parseArgs", () => {
  it("values, booleans and positionals in any order; the last of a repeated flag wins", () => {
    assert.deepEqual(parsed(["s.jsonl", "--note", "a b", "e1", "--dry-run", "--note", "c", "e2"]), {
      positional: ["s.jsonl", "e1", "e2"],
      flags: { note: "c", "dry-run": true },
      missingValue: undefined,
    });
  });

  it("a value flag followed by a flag has no value: --note --dry-run is a missing note, and --dry-run still counts", () => {
    assert.deepEqual(parsed(["s.jsonl", "--note", "--dry-run", "e1"]), {
      positional: ["s.jsonl", "e1"],
      flags: { note: true, "dry-run": true },
      missingValue: "--note",
    });
    // at the end, before `--`, and the first of two is the one reported
    assert.equal(parsed(["--cwd"]).missingValue, "--cwd");
    assert.deepEqual(parsed(["--note", "--", "x"]), {
      positional: ["x"],
      flags: { note: true },
      missingValue: "--note",
    });
    assert.equal(parsed(["--label", "--note"]).missingValue, "--label");
  });

  it("a value that starts with -- is given with =; one that starts with a single - is taken as it is", () => {
    assert.deepEqual(parsed(["--note=--text", "--label=", "--cwd=a=b"]).flags, {
      note: "--text",
      label: "",
      cwd: "a=b",
    });
    assert.deepEqual(parsed(["--context-window", "-5", "--note", "-", "--label", "---x"]).flags, {
      "context-window": "-5",
      note: "-",
      label: "---x",
    });
  });

  it("-- ends the flags: everything after it is an argument", () => {
    assert.deepEqual(parsed(["--json", "--", "--x.jsonl", "-h", "--", "--note"]), {
      positional: ["--x.jsonl", "-h", "--", "--note"],
      flags: { json: true },
      missingValue: undefined,
    });
  });

  it("flags keep the order they were given in, also those without a value (the first unknown one is reported)", () => {
    assert.deepEqual(Object.keys(parsed(["--bogus", "v", "--json", "--other"]).flags), ["bogus", "json", "other"]);
    assert.deepEqual(Object.keys(parsed(["--a", "--b", "v", "--c"]).flags), ["a", "b", "c"]);
  });

  it("a switch with a value and a one-letter flag are usage errors; a lone - is an argument", () => {
    const usageError = (message: RegExp) => (e: unknown) => e instanceof UsageError && message.test(e.message);
    assert.throws(() => parseArgs(["--yes=no"], BOOLEANS), usageError(/^--yes takes no value\.$/));
    assert.throws(() => parseArgs(["s.jsonl", "-x"], BOOLEANS), usageError(/^Unknown flag -x: flags are --name /));
    assert.throws(() => parseArgs(["-ab"], BOOLEANS), usageError(/^Unknown flag -a: /));
    assert.deepEqual(parsed(["-"]).positional, ["-"]);
  });
});

describe("the CLI's usage errors (exit 2, nothing run)", () => {
  it("--yes=no, -x, a missing value, an unknown flag", async () => {
    const cases: [string[], RegExp][] = [
      [["compact", "s.jsonl", "--yes=no"], /^--yes takes no value\.$/],
      [["trim", "s.jsonl", "e1", "-x"], /^Unknown flag -x: /],
      [["trim", "s.jsonl", "e1", "--note", "--dry-run"], /^--note needs a value\.$/],
      [["trim", "s.jsonl", "e1", "--note", "--dry-run", "--bogus"], /^Unknown flag --bogus\.\nusage:/],
      [
        ["trim", "s.jsonl", "--dry-run"],
        /^Give the id of at least one entry to trim \(pi-context tree "s\.jsonl" lists them\)\.\nusage:/,
      ],
      [["restore"], /^Give the session file and the id of at least one entry to restore/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.out, "");
      assert.match(r.err, message);
    }
  });
});
