/**
 * The numbers of the live Compact preview ("Pi Context: Compact Session…" while pi runs with the live
 * bridge): the same plan the headless preview shows (`planCompaction`: pi's `prepareCompaction`
 * on the file, pi's summary prompts), with the running pi's model, prices (bridge 1.2.0+: its own
 * catalog's `Model.cost`; older: the installed pi's catalog, `applyLiveState`) and settings over it,
 * priced by `pricePiCompactionPlan` — the running pi summarizes with its current model, like the
 * headless pi. Where the plan cannot stand for what the running pi will do (pi's compaction
 * settings differ from the file's, pi is on another branch than the file's last entry after a navigation it
 * did not write, the file cannot be planned), the numbers are "not known" with
 * the reason, never a guess.
 */

import { NothingToCompactError, planCompaction, type CompactionPlan } from "../core/flows/compact";
import { pricePiCompactionPlan, type CompactionPrice } from "../core/flows/planPrice";
import type { BridgeState } from "../bridge/protocol";
import type { BaseServices } from "../services";
import { formatCount } from "../shared/format";
import type { NotKnown } from "../viewModel/compactionPrice";
import { applyLiveState, type LiveSource } from "./liveUsage";
import * as vscode from "vscode";

/** What the live preview shows: the plan (its before/after and entries) and its price, or why not. */
export type LivePreviewNumbers = { plan: CompactionPlan; price: CompactionPrice } | NotKnown;

/**
 * Plan and price the running pi's compaction of `file` (see the module comment).
 * @param instructions the custom instructions (`/compact <instructions>`), "" for none.
 * @param now ms since epoch (whether the prompt cache is still warm).
 * @param keepFrom "Compact up to here": the entry pi keeps from (the bridge moves pi's cut there).
 * @returns the plan with the running pi's analysis and its price, or `{ notKnown }` (never throws).
 */
export async function livePreviewNumbers(
  services: BaseServices,
  file: string,
  instructions: string,
  state: BridgeState,
  source: LiveSource,
  now: number,
  keepFrom?: string,
): Promise<LivePreviewNumbers> {
  const config = services.config();
  let plan: CompactionPlan;
  try {
    plan = await planCompaction(file, {
      agentDir: services.sessions.agentDir(),
      projectSettings: config.projectSettings,
      guardSeconds: 0,
      procRoot: null,
      surface: "vscode",
      pi: services.pi.current,
      maxOutputTokens: config.summarizer.openai.maxOutputTokens,
      ...(instructions.trim() ? { customInstructions: instructions } : {}),
      ...(keepFrom !== undefined ? { keepFrom } : {}),
    });
  } catch (error) {
    const message = error instanceof NothingToCompactError ? error.message : (error as Error).message;
    services.log.info(`live bridge: compact ${file}: no preview plan: ${message}`);
    return { notKnown: vscode.l10n.t("the file could not be planned: {0}", message) };
  }
  // after a navigation without summary or label pi writes nothing: its branch is not the file's
  const fileLeaf = plan.analysis.inspect.leafId;
  if (state.leafId !== fileLeaf)
    return {
      notKnown: vscode.l10n.t(
        "pi is on another branch than the session file's last entry (pi's leaf {0}, the file's {1}): the file cannot be planned for it",
        state.leafId ?? "root",
        fileLeaf ?? "root",
      ),
    };
  const ours = plan.preparation.settings;
  const pi = state.compaction;
  if (pi && (pi.keepRecentTokens !== ours.keepRecentTokens || pi.reserveTokens !== ours.reserveTokens))
    return {
      notKnown: vscode.l10n.t(
        "the running pi compacts with keepRecentTokens {0} and reserveTokens {1}, the settings files say {2} and {3}",
        formatCount(pi.keepRecentTokens),
        formatCount(pi.reserveTokens),
        formatCount(ours.keepRecentTokens),
        formatCount(ours.reserveTokens),
      ),
    };
  const live: CompactionPlan = { ...plan, analysis: applyLiveState(plan.analysis, state, source) };
  return { plan: live, price: pricePiCompactionPlan(live, now) };
}
