/**
 * Writing the doctor's repairs (`health/repair.ts` plans and proves them): plan → confirm → commit,
 * every entry in ONE append through `write.ts`, then the doctor on the file read back.
 */

import { analyzeLoaded, type Analysis, type AnalyzeOptions } from "../rules/analyze";
import { checkHealth, contextOf } from "../health/doctor";
import { planRepair, type RepairPlan } from "../health/repair";
import type { HealthReport } from "../health/types";
import { SessionFile } from "../read/session";
import type { SessionAccess } from "../access/access";
import { ACTIONS, type SessionAction } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { replanIfChanged, withReplanning, writeOrReplan } from "./replan";
import {
  appendEntries,
  completeFinalLine,
  expectationOf,
  finalLineExpectation,
  newEntryId,
  tornLineBytes,
  UnsafeSessionWriteError,
  type AppendExpectation,
} from "./write";

/** A repair that moves pi's leaf cannot go through a running pi's bridge. */
function repairAction(plan: SessionRepairPlan): SessionAction {
  return plan.repair.entries.some((e) => e.type !== "context_edit") ? ACTIONS.repairLeaf : ACTIONS.repair;
}

export interface RepairFlowOptions extends AnalyzeOptions, SessionAccessOptions {
  surface?: MessageSurface;
  now?: () => Date;
}

export interface SessionRepairPlan {
  file: string;
  session: SessionFile;
  analysis: Analysis;
  report: HealthReport;
  repair: RepairPlan;
  /** Undefined: the file cannot take an append (`unsafe`). */
  expectation?: AppendExpectation;
  /** v1/v2 format, torn final line, not a session. */
  unsafe?: string;
  /** The only reason is a last line pi itself ends on open: its bytes ({@link endFinalLine} first). */
  tornLineBytes?: number;
  access: SessionAccess;
  options: RepairFlowOptions;
}

/** @throws the `fs` error; {@link StaleSessionError} when it changes while read. */
export async function planSessionRepair(file: string, options: RepairFlowOptions): Promise<SessionRepairPlan> {
  const session = await SessionFile.open(file, { digest: true });
  return planSessionRepairOn(session, options);
}

/** On a session already read (a private index: do not refresh it). */
export async function planSessionRepairOn(
  session: SessionFile,
  options: RepairFlowOptions,
): Promise<SessionRepairPlan> {
  let expectation: AppendExpectation | undefined;
  let unsafe: string | undefined;
  try {
    expectation = expectationOf(session);
  } catch (error) {
    if (!(error instanceof UnsafeSessionWriteError)) throw error;
    unsafe = error.message;
  }
  const analysis = analyzeLoaded(session, options);
  const report = checkHealth(analysis);
  const now = (options.now ?? (() => new Date()))();
  const repair = planRepair(session, report, contextOf(analysis), {
    newId: (reserved) => newEntryId(session.byId, reserved),
    timestamp: now.toISOString(),
  });
  const plan: SessionRepairPlan = {
    file: session.filePath,
    session,
    analysis,
    report,
    repair,
    access: await accessOfSession(session, options),
    options,
  };
  if (expectation) plan.expectation = expectation;
  if (unsafe !== undefined) plan.unsafe = unsafe;
  const torn = tornLineBytes(session);
  if (torn !== undefined) plan.tornLineBytes = torn;
  return plan;
}

export interface FinalLineResult {
  file: string;
  lineBytes: number;
  bytesBefore: number;
  bytesAfter: number;
  after: HealthReport;
}

/**
 * pi 1.6.0's own fix on open, asked for: one `\n` after a torn last line (`completeFinalLine`), after
 * the access check (a pi that has it open may be mid-line), then the doctor on the file read back.
 * @throws {UnsafeSessionWriteError}, {@link LiveSessionError}, {@link SessionChangedError} (nothing written).
 */
export async function endFinalLine(file: string, options: RepairFlowOptions): Promise<FinalLineResult> {
  const session = await SessionFile.open(file, { digest: true });
  const expectation = finalLineExpectation(session);
  assertAccess(await accessOfSession(session, options), ACTIONS.endLine, options);
  const bytesAfter = completeFinalLine(expectation);
  const back = await SessionFile.open(file);
  return {
    file,
    lineBytes: session.size - session.committedBytes,
    bytesBefore: expectation.size,
    bytesAfter,
    after: checkHealth(analyzeLoaded(back, options)),
  };
}

export interface SessionRepairResult {
  file: string;
  /** File order; empty: nothing was written. */
  entries: RepairPlan["entries"];
  bytesBefore: number;
  bytesAfter: number;
  after: HealthReport;
}

/**
 * One append of the plan's entries if the file is unchanged, then the doctor on the read-back.
 * @throws {UnsafeSessionWriteError}, {@link LiveSessionError}, {@link SessionChangedError}, Error (proof failed).
 */
export async function commitSessionRepair(plan: SessionRepairPlan): Promise<SessionRepairResult> {
  const entries = plan.repair.entries;
  const size = plan.session.committedBytes;
  if (entries.length === 0)
    return { file: plan.file, entries: [], bytesBefore: size, bytesAfter: size, after: plan.report };
  if (!plan.expectation) throw new UnsafeSessionWriteError(plan.unsafe ?? `${plan.file} cannot take an append.`);
  if (plan.repair.remaining.length > 0)
    throw new Error(
      `internal error: the planned repair leaves ${plan.repair.remaining.length} repairable error(s) (${plan.repair.remaining.map((f) => f.code).join(", ")}). Nothing was written.`,
    );
  assertAccess(await accessOfSession(plan.session, plan.options), repairAction(plan), plan.options);
  const bytesAfter = appendEntries(plan.expectation, entries);
  const back = await SessionFile.open(plan.file);
  const after = checkHealth(analyzeLoaded(back, plan.options));
  return { file: plan.file, entries, bytesBefore: plan.expectation.size, bytesAfter, after };
}

export interface RepairFlowCallbacks {
  /** Show the plan and ask; false = declined; `changed`: re-made after a change. Not called without entries. */
  confirm?: (plan: SessionRepairPlan, changed: boolean) => Promise<boolean>;
}

export type RepairOutcome =
  | { kind: "repaired"; plan: SessionRepairPlan; result: SessionRepairResult }
  /** Nothing an appended entry can fix. */
  | { kind: "nothing"; plan: SessionRepairPlan }
  | { kind: "declined"; plan: SessionRepairPlan };

export const MAX_REPAIR_ATTEMPTS = 3;

/** plan → confirm → commit, re-planning after a change at most {@link MAX_REPAIR_ATTEMPTS} times. */
export async function runRepairFlow(
  file: string,
  options: RepairFlowOptions,
  callbacks: RepairFlowCallbacks = {},
): Promise<RepairOutcome> {
  return withReplanning(MAX_REPAIR_ATTEMPTS, async (attempt) => {
    const plan = await planSessionRepair(file, options);
    if (plan.repair.entries.length === 0) return { kind: "nothing", plan };
    if (!plan.expectation) throw new UnsafeSessionWriteError(plan.unsafe ?? `${file} cannot take an append.`);
    assertAccess(plan.access, repairAction(plan), options);
    if (callbacks.confirm && !(await callbacks.confirm(plan, attempt.changed))) return { kind: "declined", plan };
    const replan = replanIfChanged(plan.expectation, attempt);
    if (replan) return replan;
    return writeOrReplan(attempt, async () => ({
      kind: "repaired" as const,
      plan,
      result: await commitSessionRepair(plan),
    }));
  });
}
