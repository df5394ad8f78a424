/**
 * Writing the doctor's repairs to a session file (`health/repair.ts` plans and proves them). No
 * `vscode` import; shared by "Pi Context: Check Session Health" and `pi-context doctor --repair`.
 *
 *   planSessionRepair(file, options)   fresh read → pi's view (`analyzeLoaded`) → the doctor →
 *                                      the repair plan, proven on an overlay; the append
 *                                      expectation (or why the file cannot take an append); the
 *                                      live-session check
 *   commitSessionRepair(plan)          live guard again; every planned entry in ONE append, only
 *                                      if the file is byte-for-byte as planned; then the file is
 *                                      read back and the doctor runs on it
 *   runRepairFlow(file, options, …)    plan → confirm → commit, re-planning when the file changed
 *
 * Never rewrites: only complete lines are appended, through `write.ts`.
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

/** Options of {@link planSessionRepair}. */
export interface RepairFlowOptions extends AnalyzeOptions, SessionAccessOptions {
  /** Wording of the live-session refusal. */
  surface?: MessageSurface;
  /** Current time (tests). */
  now?: () => Date;
}

/** A plan: the file as read, the doctor's report, the repair and what guards the write. */
export interface SessionRepairPlan {
  file: string;
  session: SessionFile;
  analysis: Analysis;
  /** The doctor's report of the file as read. */
  report: HealthReport;
  repair: RepairPlan;
  /** Taken when the plan was made (undefined: the file cannot take an append, see `unsafe`). */
  expectation?: AppendExpectation;
  /** Why nothing can be appended to this file (v1/v2 format, torn final line, not a session). */
  unsafe?: string;
  /**
   * Set when the only reason is a last line without `\n` that pi itself ends when it opens the
   * session: the bytes of that line ({@link endFinalLine} does pi's fix, then the repair can go on).
   */
  tornLineBytes?: number;
  /** Who had the session open at plan time. */
  access: SessionAccess;
  options: RepairFlowOptions;
}

/**
 * Read the session and plan its repairs.
 * @throws the `fs` error when the file cannot be read; {@link StaleSessionError} when it changes while read.
 */
export async function planSessionRepair(file: string, options: RepairFlowOptions): Promise<SessionRepairPlan> {
  const session = await SessionFile.open(file, { digest: true });
  return planSessionRepairOn(session, options);
}

/** {@link planSessionRepair} on a session already read (a private index: do not refresh it). */
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

/** What {@link endFinalLine} did. */
export interface FinalLineResult {
  file: string;
  /** The bytes of the line that had no `\n` (now a line of its own). */
  lineBytes: number;
  bytesBefore: number;
  bytesAfter: number;
  /** The doctor on the file read back. */
  after: HealthReport;
}

/**
 * pi's own fix of a last line without `\n`, asked for: pi 1.6.0 appends one `\n` when it opens
 * such a session (`loadEntriesFromFile`), so the fragment becomes a line of its own and new entries
 * start on theirs. A fresh read, the access check (a pi that has the session open, or wrote it
 * moments ago, may be in the middle of that line: refused, *Anyway* where the evidence allows),
 * one `\n` through the write path (`completeFinalLine`: only if the file is byte for byte as read),
 * then the doctor on the file read back.
 * @throws {UnsafeSessionWriteError} (nothing to end, or a file we never write), {@link LiveSessionError},
 *   {@link SessionChangedError} (nothing written).
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

/** What {@link commitSessionRepair} wrote. */
export interface SessionRepairResult {
  file: string;
  /** The appended entries in file order (empty: nothing was written). */
  entries: RepairPlan["entries"];
  bytesBefore: number;
  bytesAfter: number;
  /** The doctor on the file read back. */
  after: HealthReport;
}

/**
 * Append the plan's entries (live guard again, one append, only if the file is unchanged), then
 * read the file back and run the doctor on it. A plan without entries writes nothing.
 * @throws {UnsafeSessionWriteError} when the file cannot take an append (nothing written).
 * @throws {LiveSessionError} when the session looks live now.
 * @throws {SessionChangedError} when the file changed since the plan (nothing written).
 * @throws Error when the plan's own proof failed (a repairable error would remain; nothing written).
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

/** Callbacks of {@link runRepairFlow}. */
export interface RepairFlowCallbacks {
  /**
   * Show the plan (findings, entries to append, the doctor after) and ask; false = declined. `changed`
   * is true when the file changed after an earlier preview and this is the re-made plan. Not called
   * for a plan without entries. Undefined = write without asking.
   */
  confirm?: (plan: SessionRepairPlan, changed: boolean) => Promise<boolean>;
}

/** Result of {@link runRepairFlow}. */
export type RepairOutcome =
  | { kind: "repaired"; plan: SessionRepairPlan; result: SessionRepairResult }
  /** Nothing an appended entry can fix (see `plan.report`, `plan.repair.compaction`). */
  | { kind: "nothing"; plan: SessionRepairPlan }
  | { kind: "declined"; plan: SessionRepairPlan };

/** How often the flow re-plans after the file changed under it. */
export const MAX_REPAIR_ATTEMPTS = 3;

/**
 * plan → (unsafe / live check) → confirm → commit, re-planning from a fresh read when the file
 * changed before the write, at most {@link MAX_REPAIR_ATTEMPTS} times.
 * @throws {UnsafeSessionWriteError}, {@link LiveSessionError}, {@link SessionChangedError} after the last attempt.
 */
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
