/**
 * The headless pi driver (`src/core/pi/rpc.ts`) against a fake pi that speaks pi's RPC protocol
 * (JSON lines): get_state, compact, abort, a dialog of an extension, failures. The real pi of every
 * matrix version runs in test/conformance/user-pi.test.ts.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import type { PiRuntime } from "../../../../src/core/pi/node";
import { compactWithPi, PiRpc, PiRpcError } from "../../../../src/core/pi/rpc";
import { write } from "./fakePi";

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-rpc-")));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** pi's RPC mode, scripted by FAKE_* environment variables; records what it received in FAKE_LOG. */
const FAKE_PI = write(
  path.join(tmp, "fake-pi.cjs"),
  `const fs = require("fs");
const env = process.env;
const log = (o) => env.FAKE_LOG && fs.appendFileSync(env.FAKE_LOG, JSON.stringify(o) + "\\n");
log({ argv: process.argv.slice(2), cwd: process.cwd(), agentDir: env.PI_CODING_AGENT_DIR, offline: env.PI_OFFLINE });
if (env.FAKE_EXIT) { process.stderr.write("Error: Unknown option: --no-mcp\\n"); process.exit(1); }
const out = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
let buf = ""; let compactId; let dialogAnswered = false;
process.stdin.on("data", (d) => {
  buf += d; let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1); const c = JSON.parse(line); log(c);
    if (c.type === "get_state") out({ id: c.id, type: "response", command: "get_state", success: true,
      data: { model: env.FAKE_NO_MODEL ? null : { provider: "scripted", id: "scripted-small" } } });
    else if (c.type === "extension_ui_response") { dialogAnswered = c.cancelled === true; finish(); }
    else if (c.type === "compact") {
      compactId = c.id; out({ type: "compaction_start", reason: "manual" });
      if (env.FAKE_DIALOG) out({ type: "extension_ui_request", id: "d1", method: "confirm", title: "?" });
      else if (!env.FAKE_SLOW) finish();
    } else if (c.type === "abort") {
      out({ type: "compaction_end", aborted: true });
      out({ id: compactId, type: "response", command: "compact", success: false, error: "Compaction cancelled" });
      out({ id: c.id, type: "response", command: "abort", success: true });
    }
  }
});
process.stdin.on("end", () => process.exit(0));
function finish() {
  if (env.FAKE_REFUSE) return out({ id: compactId, type: "response", command: "compact", success: false, error: env.FAKE_REFUSE });
  out({ type: "compaction_end", aborted: false });
  out({ id: compactId, type: "response", command: "compact", success: true,
    data: { summary: "S" + (dialogAnswered ? " after a cancelled dialog" : ""), firstKeptEntryId: "k1", tokensBefore: 123, estimatedTokensAfter: 45 } });
}
`,
);

function runtime(version = "1.6.0"): PiRuntime {
  return {
    node: process.execPath,
    nodeVersion: process.version,
    install: { version, source: "path", packageDir: tmp, cliPath: FAKE_PI },
  };
}

let n = 0;
function options(env: Record<string, string> = {}) {
  const logFile = path.join(tmp, `log-${++n}.jsonl`);
  return {
    logFile,
    opts: {
      runtime: runtime(),
      sessionFile: path.join(tmp, "s.jsonl"),
      cwd: tmp,
      agentDir: path.join(tmp, "agent"),
      env: { ...process.env, FAKE_LOG: logFile, ...env },
    },
  };
}
const logged = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("compactWithPi against a fake pi", () => {
  it("starts pi on the session (rpc mode, agent dir, offline, in the header's cwd), compacts, closes", async () => {
    const { logFile, opts } = options();
    const events: string[] = [];
    const result = await compactWithPi({
      ...opts,
      customInstructions: "  focus  ",
      onEvent: (e) => events.push(String(e.type)),
    });
    assert.deepEqual(result, {
      summary: "S",
      firstKeptEntryId: "k1",
      tokensBefore: 123,
      estimatedTokensAfter: 45,
      model: "scripted/scripted-small",
    });
    assert.deepEqual(events, ["compaction_start", "compaction_end"]);
    const [start, ...commands] = logged(logFile);
    assert.deepEqual(start!.argv, [FAKE_PI, "--mode", "rpc", "--session", opts.sessionFile, "--no-mcp"].slice(1));
    assert.equal(start!.cwd, tmp);
    assert.equal(start!.agentDir, opts.agentDir);
    assert.equal(start!.offline, "1");
    assert.deepEqual(
      commands.map((c) => [c.type, c.customInstructions]),
      [
        ["get_state", undefined],
        ["compact", "focus"],
      ],
    );
  });

  it("a dialog of the user's extensions is answered cancelled (a headless pi must not wait)", async () => {
    const { opts } = options({ FAKE_DIALOG: "1" });
    assert.equal((await compactWithPi(opts)).summary, "S after a cancelled dialog");
  });

  it("cancel = RPC abort: pi's “Compaction cancelled” becomes a cancelled error", async () => {
    const { logFile, opts } = options({ FAKE_SLOW: "1" });
    const controller = new AbortController();
    await assert.rejects(
      compactWithPi({
        ...opts,
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === "compaction_start") controller.abort();
        },
      }),
      (e: unknown) => e instanceof PiRpcError && e.kind === "cancelled",
    );
    assert.ok(logged(logFile).some((c) => c.type === "abort"));
  });

  it("pi's refusal, no model, an early exit (with pi's stderr), a missing cwd", async () => {
    await assert.rejects(
      compactWithPi(options({ FAKE_REFUSE: "Nothing to compact (session too small)" }).opts),
      (e: unknown) =>
        e instanceof PiRpcError && e.kind === "refused" && e.message === "Nothing to compact (session too small)",
    );
    await assert.rejects(
      compactWithPi(options({ FAKE_NO_MODEL: "1" }).opts),
      (e: unknown) => e instanceof PiRpcError && e.kind === "no-model" && /no model with credentials/.test(e.message),
    );
    await assert.rejects(
      compactWithPi(options({ FAKE_EXIT: "1" }).opts),
      (e: unknown) =>
        e instanceof PiRpcError &&
        e.kind === "start" &&
        e.message === "pi exited with code 1: Error: Unknown option: --no-mcp",
    );
    await assert.rejects(
      compactWithPi({ ...options().opts, cwd: path.join(tmp, "gone") }),
      (e: unknown) => e instanceof PiRpcError && e.kind === "cwd-missing",
    );
  });

  it("--no-mcp only from pi 1.4.0; -e for each extension", () => {
    const base = { sessionFile: "/s.jsonl", cwd: "/", extensions: ["/b.js"] };
    assert.deepEqual(PiRpc.args({ ...base, runtime: runtime("1.3.0") }).slice(1), [
      "--mode",
      "rpc",
      "--session",
      "/s.jsonl",
      "-e",
      "/b.js",
    ]);
    assert.ok(PiRpc.args({ ...base, runtime: runtime("1.4.0") }).includes("--no-mcp"));
  });
});
