// Client for the pi 1.6.0 oracle, usable from any Node >= 18 (the test suite runs on Node 20).
// It installs the conformance package if needed (setup.mjs) and talks to ONE long-lived
// `oracle.mjs --batch` process under Node 22, so thousands of requests pay pi's module loading once.
//
//   import { OracleClient } from "./oracle-client.mjs";
//   const oracle = await OracleClient.start();
//   const view = await oracle.oracle({ file: "s.jsonl", args: ["--agent-dir", "/nonexistent", "--full"] });
//   const view2 = await oracle.oracle({ entriesJsonl: text, args: ["--context-window", "16000"] });
//   const loaded = await oracle.loadCheck({ file: "s.jsonl" });
//   await oracle.close();
//
// Every method resolves with pi's result object and rejects with an Error carrying pi's message.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { ensureConformanceInstall, ORACLE_PATH } from "./setup.mjs";

export class OracleClient {
  #child;
  #pending = new Map();
  #nextId = 1;
  #exited = null;
  #stderr = "";

  constructor(child) {
    this.#child = child;
    const rl = createInterface({ input: child.stdout, crlfDelay: Infinity });
    rl.on("line", (line) => {
      if (!line.trim()) return;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        this.#failAll(new Error(`oracle wrote a non-JSON line: ${line.slice(0, 200)}`));
        return;
      }
      const waiter = this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(new Error(`pi oracle: ${message.error}`));
    });
    child.stderr.setEncoding("utf-8");
    child.stderr.on("data", (chunk) => {
      this.#stderr = (this.#stderr + chunk).slice(-20000);
    });
    child.on("exit", (code, signal) => {
      this.#exited = { code, signal };
      this.#failAll(new Error(`oracle process exited (code ${code}, signal ${signal})\n${this.#stderr}`));
    });
  }

  /** Start the batch process (installs the conformance package first when needed). */
  static async start({ node22Path, env } = {}) {
    const node = node22Path ?? ensureConformanceInstall().node22Path;
    const child = spawn(node, [ORACLE_PATH, "--batch"], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    await new Promise((resolveSpawn, rejectSpawn) => {
      child.once("spawn", resolveSpawn);
      child.once("error", rejectSpawn);
    });
    return new OracleClient(child);
  }

  #failAll(error) {
    for (const waiter of this.#pending.values()) waiter.reject(error);
    this.#pending.clear();
  }

  /** Send one raw request object (see oracle.mjs header); resolves with `result`. */
  request(request) {
    if (this.#exited) return Promise.reject(new Error(`oracle process has exited\n${this.#stderr}`));
    const id = this.#nextId++;
    return new Promise((resolveRequest, rejectRequest) => {
      this.#pending.set(id, { resolve: resolveRequest, reject: rejectRequest });
      this.#child.stdin.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  /** pi's view of a session: `{file | entriesJsonl, args?, agentDir?, agentFiles?, leaf?}`. */
  oracle(request) {
    return this.request({ ...request, type: "oracle" });
  }

  /** Does pi load this file with the intended leaf/context? `{file | entriesJsonl, leaf?}`. */
  loadCheck(request) {
    return this.request({ ...request, type: "loadCheck" });
  }

  /**
   * What pi sends at a leaf: full projected messages, projected estimate, pi-ai's
   * transformMessages shapes, orphaned results and fillers. `{file | entriesJsonl, leaf?}`.
   */
  llm(request) {
    return this.request({ ...request, type: "llm" });
  }

  /**
   * Where pi's own code throws on a session (open, branch, projection, context, each message's
   * estimate, the projected estimate, prepareCompaction): `{file | entriesJsonl, leaf?}`.
   */
  failures(request) {
    return this.request({ ...request, type: "failures" });
  }

  /** pi's appendContextEdit for each `{targetId, replacement}` of `edits`, in order, on a copy. */
  contextEdit(request) {
    return this.request({ ...request, type: "contextEdit" });
  }

  /** What SessionManager.open (+ one append with `append: true`) does to a copy's bytes. */
  piOpen(request) {
    return this.request({ ...request, type: "piOpen" });
  }

  /** pi's session-dir encoding / list / continueRecent over a copy of an agent dir. */
  listing(request) {
    return this.request({ ...request, type: "listing" });
  }

  /** Every chat model pi's registry resolves for `{agentDir? | agentFiles?}` (default: none). */
  catalog(request = {}) {
    return this.request({ ...request, type: "catalog" });
  }

  /** pi's footer / `/session` usage totals, cost breakdown and cache misses of `{file | entriesJsonl, agentDir? | agentFiles?}`. */
  usage(request) {
    return this.request({ ...request, type: "usage" });
  }

  /** pi's system message at the leaf and its estimate (see `systemMessageView`): `{file | entriesJsonl, leaf?}`. */
  systemMessage(request) {
    return this.request({ ...request, type: "systemMessage" });
  }

  /** pi-ai's `calculateCost` on pi's registry model: `{provider, modelId, usages, agentDir? | agentFiles?}`. */
  cost(request) {
    return this.request({ ...request, type: "cost" });
  }

  /** pi-ai's isContextOverflow / isRetryableAssistantError per assistant message, and its overflow patterns. */
  classify(request) {
    return this.request({ ...request, type: "classify" });
  }

  /** pi's `/fork` (`position: "before"`, default) or `position: "at"` on a copy: `{file | entriesJsonl, entryId, position?}`. */
  fork(request) {
    return this.request({ ...request, type: "fork" });
  }

  /** Close stdin and wait for the process to finish. */
  async close() {
    if (this.#exited) return;
    const done = new Promise((resolveExit) => this.#child.once("exit", resolveExit));
    this.#child.stdin.end();
    await done;
  }
}

/** Run `fn(client)` with a started client and always close it. */
export async function withOracle(fn, options) {
  const client = await OracleClient.start(options);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
