/**
 * The shared fixtures and cases (`test/fixtures/**`) with the flags pi's view of each was taken
 * with, and the comparison of our core's view with pi's: against pi 1.6.0's saved outputs
 * (`oracle*.json`, unit test) and against a live oracle of every pi version of the matrix
 * (conformance). Our settings and window come from our own code on the same agent dir.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { SessionFile } from "../../src/core/read/session";
import { resolveSettings, compactionSettingsOf } from "../../src/core/rules/settings";
import { readModelsConfig, resolveContextWindow } from "../../src/core/rules/models";
import { buildProjection, modelSelection } from "../../src/core/rules/context";
import type { UserPi } from "../../src/core/pi/userPi";
import { oracleView } from "./oracle-view";
import { FIXTURES } from "./paths";

/** One shared fixture or case and how pi's view of it was taken. */
export interface OracleCase {
  name: string;
  session: string;
  oracle: string;
  agentDir?: string;
  contextWindow?: number;
  reserveTokens?: number;
  leaf?: string;
  branchTarget?: string;
  /** ids are random per pi run (v1 migration): compare structure only. */
  randomIds?: boolean;
}

export const SHARED_CASES: OracleCase[] = [
  {
    name: "01 repeated compaction",
    session: "cases/01-repeated-compaction-kept-window/session.jsonl",
    oracle: "cases/01-repeated-compaction-kept-window/oracle.json",
    agentDir: "cases/01-repeated-compaction-kept-window/agent",
  },
  {
    name: "02 trailing tool results",
    session: "cases/02-trailing-toolresults-exceed-keep/session.jsonl",
    oracle: "cases/02-trailing-toolresults-exceed-keep/oracle.json",
  },
  {
    name: "03 trailing pair",
    session: "cases/03-trailing-pair-above-keep-budget/session.jsonl",
    oracle: "cases/03-trailing-pair-above-keep-budget/oracle.json",
  },
  {
    name: "05 zero usage r2000",
    session: "cases/05-zero-usage-fallback/session.jsonl",
    oracle: "cases/05-zero-usage-fallback/oracle.json",
    contextWindow: 4096,
    reserveTokens: 2000,
  },
  {
    name: "05 zero usage r3200",
    session: "cases/05-zero-usage-fallback/session.jsonl",
    oracle: "cases/05-zero-usage-fallback/oracle-reserve3200.json",
    contextWindow: 4096,
    reserveTokens: 3200,
  },
  {
    name: "06 totalTokens",
    session: "cases/06-usage-totaltokens-vs-components/session.jsonl",
    oracle: "cases/06-usage-totaltokens-vs-components/oracle.json",
  },
  {
    name: "06 no total",
    session: "cases/06-usage-totaltokens-vs-components/session-no-total.jsonl",
    oracle: "cases/06-usage-totaltokens-vs-components/oracle-no-total.json",
  },
  {
    name: "06 total mismatch",
    session: "cases/06-usage-totaltokens-vs-components/session-total-mismatch.jsonl",
    oracle: "cases/06-usage-totaltokens-vs-components/oracle-total-mismatch.json",
  },
  {
    name: "08 v1 migration",
    session: "cases/08-v1-migration-firstKeptEntryIndex/session.jsonl",
    oracle: "cases/08-v1-migration-firstKeptEntryIndex/oracle.json",
    randomIds: true,
  },
  {
    name: "09 truncated",
    session: "cases/09-truncated-final-line/session.jsonl",
    oracle: "cases/09-truncated-final-line/oracle.json",
  },
  {
    name: "09 fused",
    session: "cases/09-truncated-final-line/session-fused.jsonl",
    oracle: "cases/09-truncated-final-line/oracle-fused.json",
  },
  {
    name: "11 concurrent",
    session: "cases/11-concurrent-writers-interleaved/session.jsonl",
    oracle: "cases/11-concurrent-writers-interleaved/oracle.json",
  },
  {
    name: "11 leaf pA2",
    session: "cases/11-concurrent-writers-interleaved/session.jsonl",
    oracle: "cases/11-concurrent-writers-interleaved/oracle-leaf-pA2.json",
    leaf: "pA2",
  },
  {
    name: "11 clock skew",
    session: "cases/11-concurrent-writers-interleaved/session-clock-skew.jsonl",
    oracle: "cases/11-concurrent-writers-interleaved/oracle-clock-skew.json",
  },
  {
    name: "12 aaaa",
    session:
      "cases/12-session-dir-collision-windows/sessions/--a-b-c-d--/2026-01-01T00-00-01-000Z_0000aaaa-1111-4222-8333-444455556666.jsonl",
    oracle: "cases/12-session-dir-collision-windows/oracle-0000aaaa.json",
  },
  {
    name: "12 bbbb",
    session:
      "cases/12-session-dir-collision-windows/sessions/--a-b-c-d--/2026-01-01T00-00-01-000Z_0000bbbb-1111-4222-8333-444455556666.jsonl",
    oracle: "cases/12-session-dir-collision-windows/oracle-0000bbbb.json",
  },
  {
    name: "12 cccc",
    session:
      "cases/12-session-dir-collision-windows/sessions/--C--Users-dev-proj--/2026-01-01T00-00-01-000Z_0000cccc-1111-4222-8333-444455556666.jsonl",
    oracle: "cases/12-session-dir-collision-windows/oracle-0000cccc.json",
  },
  {
    name: "13 file lists",
    session: "cases/13-file-lists-cumulative/session.jsonl",
    oracle: "cases/13-file-lists-cumulative/oracle.json",
    agentDir: "cases/13-file-lists-cumulative/agent",
  },
  {
    name: "13 fromHook",
    session: "cases/13-file-lists-cumulative/session-fromhook.jsonl",
    oracle: "cases/13-file-lists-cumulative/oracle-fromhook.json",
    agentDir: "cases/13-file-lists-cumulative/agent",
  },
  {
    name: "15 branch summary",
    session: "cases/15-branch-summary-tree/session.jsonl",
    oracle: "cases/15-branch-summary-tree/oracle.json",
    branchTarget: "bA5",
  },
  {
    name: "17 estimates",
    session: "cases/17-token-estimate-rules/session.jsonl",
    oracle: "cases/17-token-estimate-rules/oracle.json",
  },
  {
    name: "17 astral",
    session: "cases/17-token-estimate-rules/session-astral-excluded.jsonl",
    oracle: "cases/17-token-estimate-rules/oracle-astral-excluded.json",
  },
  {
    name: "fixture long",
    session: "pi-1.6.0/long.jsonl",
    oracle: "pi-1.6.0/long.oracle.json",
    agentDir: "pi-1.6.0/long.agent",
  },
  {
    name: "fixture tree",
    session: "pi-1.6.0/tree.jsonl",
    oracle: "pi-1.6.0/tree.oracle.json",
    agentDir: "pi-1.6.0/tree.agent",
  },
  {
    name: "fixture split",
    session: "pi-1.6.0/split.jsonl",
    oracle: "pi-1.6.0/split.oracle.json",
    agentDir: "pi-1.6.0/split.agent",
  },
  {
    name: "fixture overflow",
    session: "pi-1.6.0/overflow.jsonl",
    oracle: "pi-1.6.0/overflow.oracle.json",
    agentDir: "pi-1.6.0/overflow.agent",
  },
];

/** Replace ids by their first-seen order so two runs with different random ids compare. */
export function normaliseIds(value: unknown, ids: Map<string, string>, known: Set<string>): unknown {
  if (typeof value === "string") {
    if (known.has(value)) {
      if (!ids.has(value)) ids.set(value, `#${ids.size}`);
      return ids.get(value);
    }
    const parts = value.split(" ");
    if (parts.length === 2 && known.has(parts[0]!)) return `${normaliseIds(parts[0], ids, known)} ${parts[1]}`;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => normaliseIds(v, ids, known));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = normaliseIds(v, ids, known);
    return out;
  }
  return value;
}

export function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in o) out[k] = o[k];
  return out;
}

/** The oracle arguments a case's saved view was taken with (`saved`: which verify keys it has). */
export function oracleArgsOf(c: OracleCase, saved: Record<string, unknown>): string[] {
  const args = ["--agent-dir", c.agentDir ? path.join(FIXTURES, c.agentDir) : "/nonexistent", "--no-project-settings"];
  if (c.contextWindow !== undefined) args.push("--context-window", String(c.contextWindow));
  if (c.reserveTokens !== undefined) args.push("--reserve-tokens", String(c.reserveTokens));
  if (c.leaf !== undefined) args.push("--leaf", c.leaf);
  if (c.branchTarget !== undefined) args.push("--branch-target", c.branchTarget);
  if ("verifyCompactions" in saved) args.push("--verify-compactions");
  if ("verifyBranchSummaries" in saved) args.push("--verify-branch-summaries");
  const messages = (saved.context as { messages: unknown[] } | undefined)?.messages;
  if (messages && typeof messages[0] !== "string") args.push("--full");
  return args;
}

/**
 * Our view of a case compared with pi's (`oracle`, as oracle.mjs prints it), key by key.
 * @param pi the user's pi whose catalog and rules we compute with (default: the snapshot of pi 1.6.0).
 * @throws an AssertionError at the first difference.
 */
export async function assertCaseMatches(c: OracleCase, oracle: Record<string, unknown>, pi?: UserPi): Promise<void> {
  const session = await SessionFile.open(path.join(FIXTURES, c.session));
  const agentDir = c.agentDir ? path.join(FIXTURES, c.agentDir) : path.join(FIXTURES, "nonexistent-agent-dir");
  // Settings and window resolved by our own code from the same agent dir pi used.
  const projection = buildProjection(session, c.leaf);
  const selection = modelSelection(projection.path);
  const settings = resolveSettings({
    agentDir,
    cwd: session.cwd,
    projectSettings: "never",
    ...(selection ? { modelKey: `${selection.provider}/${selection.modelId}` } : {}),
  });
  const compaction = compactionSettingsOf(settings);
  if (c.reserveTokens !== undefined) compaction.reserveTokens = c.reserveTokens;
  const oracleSettings = (oracle.settings as { compaction: unknown }).compaction;
  assert.deepEqual(compaction, oracleSettings, "resolved compaction settings");
  const window =
    c.contextWindow ??
    resolveContextWindow(
      selection?.provider,
      selection?.modelId,
      readModelsConfig(agentDir, pi?.rules),
      undefined,
      pi?.catalog,
      pi?.rules,
    ).value ??
    null;
  assert.equal(window, (oracle.model as { contextWindow: number | null }).contextWindow, "context window");
  const ours = oracleView(session, {
    settings: compaction,
    contextWindow: window,
    ...(c.leaf !== undefined ? { leafId: c.leaf } : {}),
    ...(c.branchTarget !== undefined ? { branchTarget: c.branchTarget } : {}),
    verifyCompactions: "verifyCompactions" in oracle,
    verifyBranchSummaries: "verifyBranchSummaries" in oracle,
    ...(pi ? { rules: pi.rules } : {}),
  });
  // Oracles run without --full list messages as "<entryId> <role>".
  const oracleMessages = (oracle.context as { messages: unknown[] }).messages;
  if (typeof oracleMessages[0] === "string") {
    const ctx = ours.context as { messages: { entryId: string; role: string }[] };
    (ours.context as { messages: unknown[] }).messages = ctx.messages.map((m) => `${m.entryId} ${m.role}`);
  }
  const keys = [
    "entryCount",
    "leafId",
    "pathIds",
    "pathTypes",
    "contextEntries",
    "context",
    "estimateContextTokens",
    "estimateProjectedContextTokens",
    "shouldCompact",
    "prepareCompaction",
  ];
  let expected: unknown = pick(oracle, keys);
  let actual: unknown = pick(ours, keys);
  if (c.randomIds) {
    const oracleIds = new Set<string>((oracle.pathIds as string[]) ?? []);
    const ourIds = new Set(session.records.map((r) => r.id));
    expected = normaliseIds(expected, new Map(), oracleIds);
    actual = normaliseIds(actual, new Map(), ourIds);
  }
  assert.deepEqual(actual, expected);
  const usage = oracle.contextUsage as Record<string, unknown>;
  if (!("unavailable" in usage)) assert.deepEqual(ours.contextUsage, usage, "contextUsage");
  else assert.ok("unavailable" in (ours.contextUsage as object), "contextUsage unavailable");
  if (oracle.branchSummary) assert.deepEqual(ours.branchSummary, oracle.branchSummary, "branchSummary");
  if (oracle.verifyCompactions) {
    const exp = (oracle.verifyCompactions as Record<string, unknown>[]).map((v) =>
      pick(v, ["compactionId", "prepared"]),
    );
    assert.deepEqual(ours.verifyCompactions, exp, "verifyCompactions");
  }
  if (oracle.verifyBranchSummaries) {
    const exp = (oracle.verifyBranchSummaries as Record<string, unknown>[]).map((v) =>
      pick(v, ["branchSummaryId", "commonAncestorId", "entriesToSummarize", "prepared"]),
    );
    assert.deepEqual(ours.verifyBranchSummaries, exp, "verifyBranchSummaries");
  }
}
