/**
 * Compaction by the user's own pi: our plan and preview (`compact.ts`), then pi headless on the idle
 * file (`pi/rpc.ts`) summarizes and appends its own `compaction` entry; pi-context writes nothing.
 */

import { planCompaction, type CompactionPlan, type PlanOptions } from "./compact";
import { recordOwnWriteOf } from "../access/ownWrites";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess } from "../access/words";
import { expectationHolds, SessionChangedError } from "./write";
import { compactWithPi, type PiCompactResult, type RpcRecord } from "../pi/rpc";
import type { PiRuntime } from "../pi/node";
import { SessionFile } from "../read/session";
import { buildProjection } from "../rules/context";
import { estimateProjectedContextTokens } from "../rules/tokens";
import type { EntryRecord } from "../read/entries";

/** `maxOutputTokens` only sizes the preview's guess of the summary. */
export type PiFlowOptions = PlanOptions & {
  runtime: PiRuntime;
  /** Its preview is what the user confirms first. */
  plan?: CompactionPlan;
  /** Default `process.env`; `PI_CODING_AGENT_DIR` is set to `agentDir`. */
  env?: NodeJS.ProcessEnv;
};

export interface PiFlowCallbacks {
  /** False = declined (nothing started, nothing written). Undefined = proceed. */
  confirm?: (plan: CompactionPlan, changed: boolean) => Promise<boolean>;
  around?: <T>(task: (signal: AbortSignal | undefined) => Promise<T>) => Promise<T>;
  signal?: AbortSignal;
  onEvent?: (record: RpcRecord) => void;
}

export interface PiCompactionResult {
  file: string;
  entry: EntryRecord;
  pi: PiCompactResult;
  tokensBefore: number;
  /** pi's projected estimate at the new leaf, read back. */
  tokensAfter: number;
  previousCompactionId?: string;
  bytesBefore: number;
  bytesAfter: number;
}

export type PiFlowOutcome =
  { kind: "compacted"; result: PiCompactionResult; plan: CompactionPlan } | { kind: "declined"; plan: CompactionPlan };

const MAX_ATTEMPTS = 3;

/**
 * Plan → confirm → let the user's pi compact → read back what it wrote.
 * @throws {NothingToCompactError}, `LiveSessionError`, {@link UnsafeSessionWriteError},
 *   {@link SessionChangedError}, `PiRpcError`.
 */
export async function runPiCompactionFlow(
  file: string,
  options: PiFlowOptions,
  callbacks: PiFlowCallbacks = {},
): Promise<PiFlowOutcome> {
  const { plan: firstPlan, runtime, env, ...planOptions } = options;
  let changed = false;
  for (let attempt = 1; ; attempt++) {
    const plan = attempt === 1 && firstPlan ? firstPlan : await planCompaction(file, planOptions);
    assertAccess(plan.access, ACTIONS.compact, plan.options);
    if (callbacks.confirm && !(await callbacks.confirm(plan, changed))) return { kind: "declined", plan };
    if (!expectationHolds(plan.expectation)) {
      if (attempt >= MAX_ATTEMPTS)
        throw new SessionChangedError("The session file keeps changing (is pi running on it?). Nothing was written.");
      changed = true;
      continue;
    }
    // pi must not meet a live pi on the same file: the guard again, right before it starts
    assertAccess(await accessOfSession(plan.session, plan.options), ACTIONS.compact, plan.options);
    const around =
      callbacks.around ?? (<T>(task: (s: AbortSignal | undefined) => Promise<T>) => task(callbacks.signal));
    const pi = await around((signal) =>
      compactWithPi({
        runtime,
        sessionFile: file,
        cwd: plan.session.cwd ?? "",
        agentDir: planOptions.agentDir,
        ...(env ? { env } : {}),
        ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}),
        ...(signal ? { signal } : {}),
        ...(callbacks.onEvent ? { onEvent: callbacks.onEvent } : {}),
      }),
    );
    const result = await readBack(plan, pi);
    // pi-context had the user's pi write it: the file's age is not another writer's
    recordOwnWriteOf(plan.file);
    return { kind: "compacted", plan, result };
  }
}

async function readBack(plan: CompactionPlan, pi: PiCompactResult): Promise<PiCompactionResult> {
  const after = await SessionFile.open(plan.file);
  const known = plan.session.byId;
  const entry = [...after.records]
    .reverse()
    .find((r) => r.type === "compaction" && !known.has(r.id) && r.firstKeptEntryId === pi.firstKeptEntryId);
  if (!entry) throw new SessionChangedError("pi reported a compaction, but its entry is not in the session file.");
  const result: PiCompactionResult = {
    file: plan.file,
    entry,
    pi,
    tokensBefore: pi.tokensBefore,
    tokensAfter: estimateProjectedContextTokens(buildProjection(after), after).tokens,
    bytesBefore: plan.expectation.size,
    bytesAfter: after.size,
  };
  if (plan.preparation.previousCompactionId) result.previousCompactionId = plan.preparation.previousCompactionId;
  return result;
}
