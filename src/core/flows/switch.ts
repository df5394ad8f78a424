/**
 * pi's `/tree` navigation (`navigateTree`) on a session file, in steps so a UI can ask in between.
 * The new leaf follows pi (a user/custom message target → its parent, its text back to the user). The
 * append: a `branch_summary` (+ `label`), or pi's `label` on the target, or else a `pi-context/leaf`
 * marker, because pi writes nothing and would resume at the last line. A marker at the leaf or chosen
 * as target stands for its parent (switching again does not stack markers).
 */

import type { PairingFinding } from "../rules/pairing";
import { analyzeLoaded, type Analysis } from "../rules/analyze";
import type { UserPi } from "../pi/userPi";
import {
  branchSummaryBudget,
  DEFAULT_BRANCH_SUMMARY_RESERVE,
  buildBranchSummaryEntry,
  buildLabelEntry,
  buildLeafMarkerEntry,
  collectEntriesForBranchSummary,
  navigationTarget,
  prepareBranchEntries,
  type BranchCollection,
  type BranchPreparation,
} from "../rules/branch";
import { PI_CONTEXT_CUSTOM_TYPE, type EntryRecord } from "../read/entries";
import { formatFileOperations } from "../rules/files";
import { measureRequest, tooLargeError, type FittedRequest } from "./fit";
import { branchFitAdvice } from "./fitAdvice";
import type { SessionAccess } from "../access/access";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { branchSummaryText, buildBranchSummaryRequest } from "./prompts";
import { branchMessages, convertToLlm, entryEditorText, serializeConversation } from "../rules/serialize";
import { SessionFile } from "../read/session";
import { watchSession, type ChangeStage } from "./watch";
import type { ProjectSettingsMode } from "../rules/settings";
import {
  completeSummary,
  isUnauthorized,
  SummarizerError,
  type SummarizeOptions,
  type Summarizer,
  type SummaryRequest,
} from "./summarizer";
import { getPath } from "../rules/tree";
import type { BranchSummaryEntry, CustomEntry, LabelEntry, Usage } from "../types";
import { replanAfterChange, withReplanning, type Replan } from "./replan";
import {
  appendEntries,
  assertWritable,
  expectationHolds,
  expectationOf,
  newEntryId,
  SessionChangedError,
  writeBlocker,
  type AppendExpectation,
} from "./write";
import { assertPiCanOpen, unpairedAt } from "./preflight";

/** pi's `generateBranchSummary` text when the abandoned stretch holds no message. */
export const NO_CONTENT_SUMMARY = "No content to summarize";

/** pi's "Summarize branch?" answer, custom prompt and `navigateTree`'s optional label. */
export interface SwitchChoice {
  summarize: boolean;
  /** Appended as `Additional focus: …`. */
  customInstructions?: string;
  /** On the branch summary, or on the target without one. Empty = none. */
  label?: string;
}

export interface SwitchPlanOptions extends SessionAccessOptions {
  /** Settings (`branchSummary.*`) and models (the context window). */
  agentDir: string;
  projectSettings?: ProjectSettingsMode;
  cwd?: string;
  /** Overrides the session model's window for pi's budget. */
  contextWindow?: number;
  surface?: MessageSurface;
  /** Its rules (branch summaries vs `context_edit` before 1.5.0) and catalog. */
  pi?: UserPi;
}

export interface SwitchPlan {
  file: string;
  /** A private index. */
  session: SessionFile;
  analysis: Analysis;
  /** A `pi-context/leaf` marker resolves to its parent. */
  target: EntryRecord;
  fileLeafId: string | null;
  /** The file's leaf, or the parent of a `pi-context/leaf` marker there. */
  oldLeafId: string | null;
  newLeafId: string | null;
  /** A user/custom message target: its text goes back to the user. */
  returnsText: boolean;
  /** pi's `editorText`. */
  editorText?: string;
  /** pi: "Already at this point". */
  noop: boolean;
  collection: BranchCollection;
  /** pi's `prepareBranchEntries` with pi's budget. */
  preparation: BranchPreparation;
  /** `(window || 128000) − branchSummary.reserveTokens`. */
  budget: number;
  contextWindow: number | undefined;
  reserveTokens: number;
  /** pi's `branchSummary.skipPrompt`: the UI defaults to "no summary". */
  skipPrompt: boolean;
  /** The append is refused if the file changed since. */
  expectation: AppendExpectation;
  access: SessionAccess;
  /** Checked at plan time: the flow refuses before any request. */
  writeBlocker?: string;
  /** Tool results pi would send without their call at the new leaf (providers reject them). */
  pairingErrors?: PairingFinding[];
  options: SwitchPlanOptions;
}

export type PlannedWrite = "branch_summary" | "label" | "leaf-marker";

/**
 * Read the session and plan a navigation to `targetId`.
 * @throws Error `Entry X not found` (pi's message); {@link UnsafeSessionWriteError}; the `fs` error.
 */
export async function planSwitch(file: string, targetId: string, options: SwitchPlanOptions): Promise<SwitchPlan> {
  const session = await SessionFile.open(file, { digest: true });
  return planSwitchOn(session, targetId, options);
}

/** On a session already read with `{ digest: true }` (do not refresh it). */
export async function planSwitchOn(
  session: SessionFile,
  targetId: string,
  options: SwitchPlanOptions,
): Promise<SwitchPlan> {
  const file = session.filePath;
  const expectation = expectationOf(session);
  assertPiCanOpen(session, "switch branches in", options.surface); // before any question
  let target = session.byId.get(targetId);
  if (!target) throw new Error(`Entry ${targetId} not found`);
  target = resolveMarker(session, target);
  const analysis = analyzeLoaded(session, {
    agentDir: options.agentDir,
    ...(options.projectSettings ? { projectSettings: options.projectSettings } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(options.pi ? { pi: options.pi } : {}),
  });
  const fileLeafId = session.leafId;
  const fileLeaf = fileLeafId === null ? undefined : session.byId.get(fileLeafId);
  const oldLeafId = fileLeaf && isLeafMarker(fileLeaf) ? fileLeaf.parentId : fileLeafId;
  const { newLeafId, returnsText } = navigationTarget(target);
  // pi's `branch(parentId)` throws when the parent is not in the file: refuse too, never write an orphan
  if (newLeafId !== null && !session.byId.has(newLeafId)) {
    throw new Error(
      `Entry ${newLeafId} not found: the parent of "${target.preview ?? target.id}" is not in the session file, so pi cannot move there. Nothing was written.`,
    );
  }
  const collection = collectEntriesForBranchSummary(session, oldLeafId, target.id);
  const contextWindow = analysis.window.value ?? undefined;
  const reserveTokens = analysis.settings.branchSummary.reserveTokens.value ?? DEFAULT_BRANCH_SUMMARY_RESERVE;
  const budget = branchSummaryBudget(contextWindow, reserveTokens);
  const preparation = prepareBranchEntries(collection.entries, budget, session, analysis.pi.rules);
  const plan: SwitchPlan = {
    file,
    session,
    analysis,
    target,
    fileLeafId,
    oldLeafId,
    newLeafId,
    returnsText,
    noop: target.id === oldLeafId,
    collection,
    preparation,
    budget,
    contextWindow,
    reserveTokens,
    skipPrompt: analysis.settings.branchSummary.skipPrompt.value === true,
    expectation,
    access: await accessOfSession(session, options),
    options,
  };
  const blocker = writeBlocker(file);
  if (blocker) plan.writeBlocker = blocker;
  if (!plan.noop) {
    const unpaired = unpairedAt(session, newLeafId);
    if (unpaired.length > 0) plan.pairingErrors = unpaired;
  }
  if (returnsText) {
    try {
      const text = entryEditorText(session.readEntry(target));
      if (text !== undefined) plan.editorText = text;
    } catch {}
  }
  return plan;
}

function isLeafMarker(r: EntryRecord): boolean {
  return r.type === "custom" && r.customType === PI_CONTEXT_CUSTOM_TYPE;
}

function resolveMarker(session: SessionFile, r: EntryRecord): EntryRecord {
  let current = r;
  for (let i = 0; i < 1000 && isLeafMarker(current) && current.parentId; i++) {
    const parent = session.byId.get(current.parentId);
    if (!parent) break;
    current = parent;
  }
  return current;
}

/** pi summarizes only when there are entries to summarize. */
export function willSummarize(plan: SwitchPlan, choice: SwitchChoice): boolean {
  return !plan.noop && choice.summarize && plan.collection.entries.length > 0;
}

/** Empty: nothing is written. */
export function plannedWrites(plan: SwitchPlan, choice: SwitchChoice): PlannedWrite[] {
  if (plan.noop) return [];
  const label = choice.label?.trim();
  if (willSummarize(plan, choice)) return label ? ["branch_summary", "label"] : ["branch_summary"];
  if (label) return ["label"];
  if (plan.newLeafId === plan.fileLeafId) return [];
  if (plan.newLeafId === plan.oldLeafId && plan.fileLeafId !== null && plan.oldLeafId !== plan.fileLeafId) return []; // the marker at the leaf already points there
  return ["leaf-marker"];
}

/** Undefined when pi would not call the model (no messages). */
export function branchSummaryRequestOf(
  plan: SwitchPlan,
  choice: SwitchChoice,
  maxOutputTokens: number,
): SummaryRequest | undefined {
  if (!willSummarize(plan, choice) || plan.preparation.messages.length === 0) return undefined;
  const conversation = serializeConversation(convertToLlm(branchMessages(plan.session, plan.preparation.messages)));
  const custom = choice.customInstructions?.trim();
  return buildBranchSummaryRequest({
    conversation,
    ...(custom ? { customInstructions: custom } : {}),
    maxOutputTokens,
  });
}

/** Fit the branch-summary request; a misfit is `problem`, shown before sending. @throws {SummarizerError} */
export async function fitSwitch(
  plan: SwitchPlan,
  choice: SwitchChoice,
  summarizer: Summarizer,
  signal?: AbortSignal,
): Promise<(FittedRequest & { problem?: SummarizerError }) | undefined> {
  const request = branchSummaryRequestOf(plan, choice, summarizer.maxOutputTokens);
  if (!request) return undefined;
  const fitted = await measureRequest(summarizer, request, "branch summary", signal);
  if (!fitted.shortfall) return fitted;
  const model = plan.analysis.inspect.model;
  const advice = branchFitAdvice(
    fitted.shortfall,
    {
      surface: plan.options.surface ?? "vscode",
      provider: summarizer.provider,
      model: summarizer.modelName ?? summarizer.label,
      window: fitted.shortfall.window,
      maxOutputTokens: summarizer.maxOutputTokens,
    },
    {
      budget: plan.budget,
      reserveTokens: plan.reserveTokens,
      ...(model ? { sessionModel: `${model.provider}/${model.modelId}` } : {}),
      ...(plan.contextWindow ? { sessionWindow: plan.contextWindow } : {}),
      summarizedTokens: plan.preparation.totalTokens,
    },
  );
  return { ...fitted, problem: tooLargeError([fitted.shortfall], advice) };
}

export interface BranchSummaryDraft {
  /** As pi stores it: preamble + answer + file lists, or "No content to summarize". */
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  usage?: Usage;
  answer?: string;
  fitted?: FittedRequest;
}

/** pi's `generateBranchSummary` with our summarizer and pi's acceptance rules. @throws {SummarizerError} */
export async function summarizeSwitch(
  plan: SwitchPlan,
  choice: SwitchChoice,
  summarizer: Summarizer,
  options: SummarizeOptions = {},
): Promise<BranchSummaryDraft> {
  const fitted = await fitSwitch(plan, choice, summarizer, options.signal);
  if (!fitted) return { summary: NO_CONTENT_SUMMARY, readFiles: [], modifiedFiles: [] };
  if (fitted.problem) throw fitted.problem;
  const result = await completeSummary(summarizer, fitted.request, "Branch summarization", options);
  const { readFiles, modifiedFiles } = plan.preparation;
  const draft: BranchSummaryDraft = {
    summary: branchSummaryText(result.text) + formatFileOperations(readFiles, modifiedFiles),
    readFiles: [...readFiles],
    modifiedFiles: [...modifiedFiles],
    answer: result.text,
    fitted,
  };
  if (result.usage) draft.usage = result.usage;
  return draft;
}

/** Fresh ids, one timestamp. @throws Error when a summary is planned but no draft is given. */
export function buildSwitchEntries(
  plan: SwitchPlan,
  choice: SwitchChoice,
  draft: BranchSummaryDraft | undefined,
  now: Date = new Date(),
): (BranchSummaryEntry | LabelEntry | CustomEntry)[] {
  const writes = plannedWrites(plan, choice);
  const timestamp = now.toISOString();
  const reserved = new Set<string>();
  const id = () => {
    const v = newEntryId(plan.session.byId, reserved);
    reserved.add(v);
    return v;
  };
  const label = choice.label?.trim();
  const out: (BranchSummaryEntry | LabelEntry | CustomEntry)[] = [];
  if (writes[0] === "branch_summary") {
    if (!draft) throw new Error("internal error: a branch summary is planned but was not produced");
    const summary = buildBranchSummaryEntry({
      id: id(),
      parentId: plan.newLeafId,
      timestamp,
      fromId: plan.oldLeafId ?? "root",
      summary: draft.summary,
      readFiles: draft.readFiles,
      modifiedFiles: draft.modifiedFiles,
      ...(draft.usage ? { usage: draft.usage } : {}),
      fromHook: false,
    });
    out.push(summary);
    if (label) out.push(buildLabelEntry({ id: id(), parentId: summary.id, timestamp, targetId: summary.id, label }));
  } else if (writes[0] === "label") {
    out.push(buildLabelEntry({ id: id(), parentId: plan.newLeafId, timestamp, targetId: plan.target.id, label }));
  } else if (writes[0] === "leaf-marker") {
    out.push(
      buildLeafMarkerEntry({
        id: id(),
        parentId: plan.newLeafId,
        timestamp,
        targetId: plan.target.id,
        fromId: plan.oldLeafId,
      }),
    );
  }
  return out;
}

export interface SwitchResult {
  file: string;
  entries: (BranchSummaryEntry | LabelEntry | CustomEntry)[];
  /** Where pi resumes (the summary / label / marker hangs there). */
  newLeafId: string | null;
  /** What pi loads as its leaf. */
  fileLeafId: string | null;
  editorText?: string;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Write after the live guard, in one append, only if the file is as planned.
 * @throws {LiveSessionError}; {@link SessionChangedError} (nothing written).
 */
export async function commitSwitch(
  plan: SwitchPlan,
  choice: SwitchChoice,
  draft?: BranchSummaryDraft,
  now: () => Date = () => new Date(),
): Promise<SwitchResult> {
  const entries = buildSwitchEntries(plan, choice, draft, now());
  const result: SwitchResult = {
    file: plan.file,
    entries,
    newLeafId: plan.noop ? plan.oldLeafId : plan.newLeafId,
    fileLeafId: plan.fileLeafId,
    bytesBefore: plan.expectation.size,
    bytesAfter: plan.expectation.size,
  };
  if (plan.editorText !== undefined) result.editorText = plan.editorText;
  if (entries.length === 0) return result;
  assertAccess(await accessOfSession(plan.session, plan.options), ACTIONS.switch, plan.options);
  result.bytesAfter = appendEntries(plan.expectation, entries);
  result.fileLeafId = entries[entries.length - 1]!.id;
  return result;
}

export interface SwitchFlowCallbacks extends SummarizeOptions {
  /** The choice for each plan (`changed` after a re-plan); undefined stops. No callback: keep the choice. */
  decide?: (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>;
  around?: <T>(task: (options: SummarizeOptions) => Promise<T>) => Promise<T>;
  /** HTTP 401/403: a summarizer to retry with, or undefined; at most {@link MAX_SWITCH_AUTH_RETRIES}. */
  onUnauthorized?: (error: SummarizerError, summarizer: Summarizer) => Promise<Summarizer | undefined>;
  /** The file changed (`preview`, `summary`: request aborted, `write`: summary discarded); nothing written. */
  onSessionChanged?: (stage: ChangeStage, attempt: number) => void;
  /** ms; default `CHANGE_POLL_MS`. */
  changePollMs?: number;
}

export const MAX_SWITCH_AUTH_RETRIES = 2;

export type SwitchOutcome =
  | { kind: "switched"; plan: SwitchPlan; choice: SwitchChoice; result: SwitchResult; draft?: BranchSummaryDraft }
  | { kind: "noop"; plan: SwitchPlan; result: SwitchResult }
  | { kind: "declined"; plan: SwitchPlan };

export const MAX_SWITCH_ATTEMPTS = 3;

/**
 * plan → decide → summarize → commit, re-planning after a change (the abandoned stretch moves) at most
 * {@link MAX_SWITCH_ATTEMPTS} times. @throws what the steps throw; {@link SessionChangedError} at the end.
 */
export async function runSwitchFlow(
  file: string,
  targetId: string,
  choice: SwitchChoice,
  summarizer: Summarizer | (() => Promise<Summarizer>) | undefined,
  options: SwitchPlanOptions,
  callbacks: SwitchFlowCallbacks = {},
): Promise<SwitchOutcome> {
  let authRetries = 0;
  let current: Summarizer | undefined;
  return withReplanning(MAX_SWITCH_ATTEMPTS, async (attempt) => {
    const plan = await planSwitch(file, targetId, options);
    if (plan.noop) return { kind: "noop", plan, result: await commitSwitch(plan, choice, undefined) };
    const decided = callbacks.decide ? await callbacks.decide(plan, attempt.changed) : choice;
    if (!decided) return { kind: "declined", plan };
    const writes = plannedWrites(plan, decided);
    if (writes.length > 0) assertAccess(plan.access, ACTIONS.switch, options);
    if (writes.length > 0) assertWritable(plan.file); // before any summarizer request
    if (!expectationHolds(plan.expectation)) return replanAfterChange("preview", attempt, callbacks.onSessionChanged);
    const around = callbacks.around ?? (<T>(task: (o: SummarizeOptions) => Promise<T>) => task(callbacks));
    return around(async (inner): Promise<SwitchOutcome | Replan> => {
      let draft: BranchSummaryDraft | undefined;
      if (writes[0] === "branch_summary") {
        current ??= typeof summarizer === "function" ? await summarizer() : summarizer;
        if (!current && plan.preparation.messages.length > 0)
          throw new Error("internal error: no summarizer for a branch summary");
        const watch = watchSession(plan.expectation, inner.signal, callbacks.changePollMs);
        try {
          for (;;) {
            try {
              draft = current
                ? await summarizeSwitch(plan, decided, current, { ...inner, signal: watch.signal })
                : { summary: NO_CONTENT_SUMMARY, readFiles: [], modifiedFiles: [] };
              break;
            } catch (error) {
              if (watch.changed) return replanAfterChange("summary", attempt, callbacks.onSessionChanged);
              if (
                !current ||
                !isUnauthorized(error) ||
                !callbacks.onUnauthorized ||
                authRetries >= MAX_SWITCH_AUTH_RETRIES
              )
                throw error;
              authRetries++;
              const next = await callbacks.onUnauthorized(error, current);
              if (!next) throw error;
              current = next;
            }
          }
        } finally {
          watch.dispose();
        }
      }
      try {
        const done: SwitchOutcome = {
          kind: "switched",
          plan,
          choice: decided,
          result: await commitSwitch(plan, decided, draft),
        };
        if (draft) done.draft = draft;
        return done;
      } catch (error) {
        if (error instanceof SessionChangedError)
          return replanAfterChange("write", attempt, callbacks.onSessionChanged);
        throw error;
      }
    });
  });
}

export function pathOf(session: SessionFile, leafId: string | null): string[] {
  return getPath(session, leafId).path.map((e) => e.id);
}
