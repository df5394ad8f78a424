/**
 * Branch switching: pi's `/tree` navigation (`AgentSession.navigateTree`) on a session file, split
 * into steps so a UI can ask in between. Shared by the tree view's "Switch to Here…" and
 * `pi-context switch`. No `vscode` import.
 *
 *   planSwitch(file, targetId)        read the file; new leaf by pi's rule (a user/custom message
 *                                     target → its parent, its text goes back to the user; anything
 *                                     else → the target); the abandoned stretch
 *                                     (`collectEntriesForBranchSummary`) and its preparation with
 *                                     pi's budget (`prepareBranchEntries`,
 *                                     `(window || 128000) − branchSummary.reserveTokens`); the
 *                                     append expectation; the live-session check
 *   plannedWrites(plan, choice)       what will be appended, for a preview / `--dry-run`
 *   summarizeSwitch(plan, choice, s)  pi's `generateBranchSummary`: no messages → "No content to
 *                                     summarize" without a call; else our branch-summary prompt
 *                                     (pi's format, no Critical Context), fitted into the
 *                                     summarizer's window, pi's acceptance rules, preamble +
 *                                     answer + pi's `<read-files>`/`<modified-files>` blocks
 *   commitSwitch(plan, choice, draft) live guard again; append in one write, only if the file is
 *                                     unchanged since the plan:
 *                                     - with a summary: `branch_summary` on the new leaf (`fromId` =
 *                                       old leaf or "root"), then a `label` on it if given (pi);
 *                                     - without, with a label: pi's `label` on the target, parented
 *                                       on the new leaf (pi writes exactly this);
 *                                     - without either: a `custom` leaf marker
 *                                       (`pi-context/leaf`, no model context) parented on the new
 *                                       leaf, because pi writes nothing and the move would be lost
 *                                       (pi resumes at the last line)
 *   runSwitchFlow(...)                all of it, re-planning when the file changed under us
 *
 * A `pi-context/leaf` marker at the file's leaf stands for its parent (so switching again does not
 * summarize or stack markers), and a marker chosen as the target stands for its parent too.
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

/** pi's summary text when the abandoned stretch holds no message (`generateBranchSummary`). */
export const NO_CONTENT_SUMMARY = "No content to summarize";

/** What the user chose (pi's "Summarize branch?" + custom prompt, plus the optional label of `navigateTree`). */
export interface SwitchChoice {
  /** Summarize the branch being left. */
  summarize: boolean;
  /** "Summarize with custom prompt": appended as `Additional focus: …`. */
  customInstructions?: string;
  /** Label to set (on the branch summary, or on the target without a summary). Empty = none. */
  label?: string;
}

/** Options of {@link planSwitch}. */
export interface SwitchPlanOptions extends SessionAccessOptions {
  /** pi's agent dir (settings: `branchSummary.*`; models: the context window). */
  agentDir: string;
  projectSettings?: ProjectSettingsMode;
  cwd?: string;
  /** Use this context window for pi's budget instead of the session model's. */
  contextWindow?: number;
  /** Where messages are shown (the live guard names VS Code's setting or the CLI's flag). Default `vscode`. */
  surface?: MessageSurface;
  /** The user's pi (its rules: branch summaries vs `context_edit` before 1.5.0; its catalog for the budget). */
  pi?: UserPi;
}

/** Everything the later steps need. Immutable once made. */
export interface SwitchPlan {
  file: string;
  /** The file as read for this plan (a private index). */
  session: SessionFile;
  analysis: Analysis;
  /** The entry the user picked (a `pi-context/leaf` marker resolves to its parent). */
  target: EntryRecord;
  /** The file's leaf (last entry). */
  fileLeafId: string | null;
  /** The leaf navigation starts from (the file's leaf, or the parent of a `pi-context/leaf` marker there). */
  oldLeafId: string | null;
  /** Where the leaf goes (pi's rule). */
  newLeafId: string | null;
  /** The target is a user/custom message: its text goes back to the user. */
  returnsText: boolean;
  /** That text (pi's `editorText`), when {@link returnsText}. */
  editorText?: string;
  /** The target is the current leaf: nothing to do (pi: "Already at this point"). */
  noop: boolean;
  /** pi's `collectEntriesForBranchSummary(oldLeafId, target)`. */
  collection: BranchCollection;
  /** pi's `prepareBranchEntries` with pi's budget (empty when there is nothing to summarize). */
  preparation: BranchPreparation;
  /** `(window || 128000) − branchSummary.reserveTokens`. */
  budget: number;
  contextWindow: number | undefined;
  reserveTokens: number;
  /** pi's `branchSummary.skipPrompt`: the UI defaults to "no summary". */
  skipPrompt: boolean;
  /** Taken when the plan was made; the append is refused if the file changed since. */
  expectation: AppendExpectation;
  /** Who had the session open at plan time. */
  access: SessionAccess;
  /** Why the file cannot be written, checked at plan time (the flow refuses before any request). */
  writeBlocker?: string;
  /**
   * Tool results pi would send without their call at the new leaf (`preflight.ts` `unpairedAt`):
   * providers reject pi's requests there. The CLI refuses, VS Code asks; absent when there are none.
   */
  pairingErrors?: PairingFinding[];
  options: SwitchPlanOptions;
}

/** What a switch appends (in order). */
export type PlannedWrite = "branch_summary" | "label" | "leaf-marker";

/**
 * Read the session and plan a navigation to `targetId`.
 * @throws Error `Entry X not found` (pi's message) when the id is not an entry of the file.
 * @throws {UnsafeSessionWriteError} for files we never write (v1/v2 sessions, torn final line, not a session).
 * @throws the `fs` error when the file cannot be read.
 */
export async function planSwitch(file: string, targetId: string, options: SwitchPlanOptions): Promise<SwitchPlan> {
  const session = await SessionFile.open(file, { digest: true });
  return planSwitchOn(session, targetId, options);
}

/**
 * {@link planSwitch} on a session already read (it must be a private index opened with
 * `{ digest: true }`: do not refresh it).
 */
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
  // pi's navigateTree moves to the parent of a user/custom message with `branch(parentId)`, which
  // throws when that parent is not in the file; refuse the same way instead of writing an orphan.
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
    } catch {
      // unreadable body: no text to give back
    }
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

/** True when a summary will be written for this choice (pi: only when there are entries to summarize). */
export function willSummarize(plan: SwitchPlan, choice: SwitchChoice): boolean {
  return !plan.noop && choice.summarize && plan.collection.entries.length > 0;
}

/** The entries a choice appends, in order (empty: nothing is written). */
export function plannedWrites(plan: SwitchPlan, choice: SwitchChoice): PlannedWrite[] {
  if (plan.noop) return [];
  const label = choice.label?.trim();
  if (willSummarize(plan, choice)) return label ? ["branch_summary", "label"] : ["branch_summary"];
  if (label) return ["label"];
  if (plan.newLeafId === plan.fileLeafId) return [];
  if (plan.newLeafId === plan.oldLeafId && plan.fileLeafId !== null && plan.oldLeafId !== plan.fileLeafId) return []; // the marker at the leaf already points there
  return ["leaf-marker"];
}

/** The summary request for a choice, or undefined when pi would not call the model (no messages). */
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

/**
 * Count a choice's branch-summary request and fit it into the summarizer's window; when it does not
 * fit, `problem` is the `too-large` error with the numbers and what to change (`fitAdvice.ts`), so a
 * question or a dry run can show it before anything is sent. Undefined when no request is made.
 * @throws {SummarizerError} `cancelled` when `signal` fires.
 */
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

/** A finished branch summary, not yet written. */
export interface BranchSummaryDraft {
  /** The summary text as pi stores it (preamble + answer + file lists, or "No content to summarize"). */
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  usage?: Usage;
  /** The model's answer (absent when no call was made). */
  answer?: string;
  /** The fitted request that was sent. */
  fitted?: FittedRequest;
}

/**
 * pi's `generateBranchSummary` with our summarizer: no messages → `No content to summarize` (no
 * call, empty file lists); else fit the request into the summarizer's window, run it with pi's
 * acceptance rules, and build preamble + answer + file-list blocks.
 * @throws {SummarizerError} cancel, too large, network/HTTP failure, empty answer, `length` stop, tool call.
 */
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

/**
 * The entries a switch appends (see the file comment), with fresh ids and one timestamp.
 * @throws Error when a summary is planned but no draft is given.
 */
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

/** What a switch did. */
export interface SwitchResult {
  file: string;
  /** Appended entries, in order (empty when nothing had to be written). */
  entries: (BranchSummaryEntry | LabelEntry | CustomEntry)[];
  /** The position pi resumes at: the new leaf (the branch summary / label / marker hangs there). */
  newLeafId: string | null;
  /** The file's last entry after the switch (what pi loads as its leaf). */
  fileLeafId: string | null;
  /** The target's text for a user/custom message target. */
  editorText?: string;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Write the switch: live guard again, then the entries (one write), only if the file is
 * byte-for-byte as planned.
 * @throws {LiveSessionError} when the session looks live now.
 * @throws {SessionChangedError} when the file changed since the plan (nothing written).
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

/** Callbacks of {@link runSwitchFlow}. */
export interface SwitchFlowCallbacks extends SummarizeOptions {
  /**
   * Called with each plan (again after the file changed: `changed` true). Return the choice to go
   * on with, or undefined to stop (nothing written). Undefined callback = keep the given choice.
   */
  decide?: (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>;
  /** Wraps summarizing + writing (e.g. a cancellable progress notification). */
  around?: <T>(task: (options: SummarizeOptions) => Promise<T>) => Promise<T>;
  /**
   * The summarizer answered HTTP 401/403 (key missing or wrong): return a summarizer to retry the
   * same branch summary with (e.g. after asking for a new key), or undefined to fail. At most
   * {@link MAX_SWITCH_AUTH_RETRIES} retries per switch.
   */
  onUnauthorized?: (error: SummarizerError, summarizer: Summarizer) => Promise<Summarizer | undefined>;
  /**
   * The session file changed under the flow: at `preview` while the question was shown (nothing
   * sent), at `summary` while the branch summary was received (the request was aborted before this
   * is called), at `write` right before the append (a finished summary was discarded). Nothing was
   * written; the flow plans again (`decide` gets `changed` true) unless this was the last attempt.
   */
  onSessionChanged?: (stage: ChangeStage, attempt: number) => void;
  /** How often a running branch summary checks the file for changes (ms; default `CHANGE_POLL_MS`). */
  changePollMs?: number;
}

/** How often one switch retries after HTTP 401/403 ({@link SwitchFlowCallbacks.onUnauthorized}). */
export const MAX_SWITCH_AUTH_RETRIES = 2;

/** Result of {@link runSwitchFlow}. */
export type SwitchOutcome =
  | { kind: "switched"; plan: SwitchPlan; choice: SwitchChoice; result: SwitchResult; draft?: BranchSummaryDraft }
  | { kind: "noop"; plan: SwitchPlan; result: SwitchResult }
  | { kind: "declined"; plan: SwitchPlan };

/** How often the flow re-plans after the file changed under it. */
export const MAX_SWITCH_ATTEMPTS = 3;

/**
 * plan → decide → (live check) → summarize → commit; when the file changed before the write,
 * re-plan (the old leaf moved, so the abandoned stretch and its summary change) and decide again,
 * at most {@link MAX_SWITCH_ATTEMPTS} times. A change while the branch summary is received aborts
 * the request at once (`watch.ts`), then the flow re-plans.
 * @param summarizer needed only when the choice summarizes something.
 * A file it cannot write (read-only, immutable) is refused before any summarizer request.
 * @throws {LiveSessionError}, {@link UnsafeSessionWriteError} (also for a file that cannot be
 *   written), {@link SummarizerError} (incl. cancel), `Entry X not found`,
 *   {@link SessionChangedError} after the last attempt, {@link SessionWriteError} when the append failed.
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

/** The path ids root → `leafId` in a session (for checks and messages). */
export function pathOf(session: SessionFile, leafId: string | null): string[] {
  return getPath(session, leafId).path.map((e) => e.id);
}
