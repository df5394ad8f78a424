/**
 * Compaction by the user's own pi: the same plan and preview as `compact.ts` (pi's
 * `prepareCompaction`, computed by us before anything is spent), then pi itself — headless on the
 * idle session file (`pi/rpc.ts`) — summarizes with its own prompts, model, credentials and
 * extensions and appends its own `compaction` entry. pi-context writes nothing in this mode.
 *
 *   plan (or the given one) → live check → confirm → file unchanged since the plan? (else plan and
 *   ask again) → `compactWithPi` → read the file back: the entry pi appended, pi's estimate after.
 *
 * No `vscode` import.
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

/** Options of {@link runPiCompactionFlow} (`maxOutputTokens` only sizes the preview's guess of the summary). */
export type PiFlowOptions = PlanOptions & {
  /** The user's pi and the Node to run it. */
  runtime: PiRuntime;
  /** A plan already made for the file (its preview is what the user confirms first). */
  plan?: CompactionPlan;
  /** The environment pi runs with (default `process.env`; `PI_CODING_AGENT_DIR` is set to `agentDir`). */
  env?: NodeJS.ProcessEnv;
};

/** Callbacks of {@link runPiCompactionFlow}. */
export interface PiFlowCallbacks {
  /** Show the preview; false = declined (nothing started, nothing written). Undefined = proceed. */
  confirm?: (plan: CompactionPlan, changed: boolean) => Promise<boolean>;
  /** Wraps the pi run (e.g. in a progress notification); the task gets the signal to use. */
  around?: <T>(task: (signal: AbortSignal | undefined) => Promise<T>) => Promise<T>;
  signal?: AbortSignal;
  /** pi's events (`compaction_start`, `compaction_end`, `summarization_retry_*`). */
  onEvent?: (record: RpcRecord) => void;
}

/** What pi wrote. */
export interface PiCompactionResult {
  file: string;
  /** The `compaction` entry pi appended (as read back). */
  entry: EntryRecord;
  /** pi's answer (`summary`, `firstKeptEntryId`, `tokensBefore`, the model it summarized with). */
  pi: PiCompactResult;
  tokensBefore: number;
  /** pi's projected estimate at the new leaf, read back from the file. */
  tokensAfter: number;
  previousCompactionId?: string;
  bytesBefore: number;
  bytesAfter: number;
}

/** Result of {@link runPiCompactionFlow}. */
export type PiFlowOutcome =
  { kind: "compacted"; result: PiCompactionResult; plan: CompactionPlan } | { kind: "declined"; plan: CompactionPlan };

/** How often the flow plans again after the file changed under the preview. */
const MAX_ATTEMPTS = 3;

/**
 * Plan → confirm → let the user's pi compact → read back what it wrote.
 * @throws {NothingToCompactError}, `LiveSessionError`, {@link UnsafeSessionWriteError},
 *   {@link SessionChangedError} (the file kept changing), `PiRpcError` (pi did not start, has no
 *   model, refused, was cancelled — nothing written — or exited).
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

/** The compaction entry pi appended after the plan's bytes, and the estimate at the new leaf. */
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
