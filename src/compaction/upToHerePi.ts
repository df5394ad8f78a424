/**
 * "Compact Up to Here…" when pi summarizes — the running pi (live bridge) or the user's own pi
 * (`piContext.summarizer.provider` `pi`, or `auto` with a pi and no summarizer configured here).
 *
 * pi's headless RPC `compact` always cuts where `keepRecentTokens` says; pi 1.6.0 moves the cut only
 * for an extension's `session_before_compact` hook, which the live bridge has (1.3.0+,
 * `bridge/cutAt.ts`). So the user's pi compacts up to here the way "Switch to Here…" summarizes a
 * branch with it: headless with the live bridge loaded (`-e` the shipped bundle unless one is
 * installed in the agent dir), asked through the bridge (`liveBridge.routeCompaction` with
 * `keepFrom`); pi writes its own entry (`fromHook: false`), pi-context writes nothing.
 *
 * pi's limit, said before anything is asked ({@link assertPiCanCut}): pi emits the hook only when its
 * own `/compact` has something to summarize at the leaf (the context is over `keepRecentTokens`),
 * otherwise it answers "Nothing to compact" first. Then the configured summarizer can do it:
 * the message says how.
 */

import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { recordOwnWriteOf } from "../core/access/ownWrites";
import { assertAccess } from "../core/access/words";
import { planCompaction, type CompactionPlan } from "../core/flows/compact";
import { pricePiCompactionPlan } from "../core/flows/planPrice";
import { PiRpc } from "../core/pi/rpc";
import { isPrepared, prepareCompaction } from "../core/rules/compaction";
import type { CompactCommandOutcome, Services } from "../services";
import { formatCount as n } from "../shared/format";
import { confirmPreview, planTitle, type PreviewSummarizer } from "./preview";

/** How long to wait for the headless pi's bridge to announce itself (ms). */
const BRIDGE_WAIT_MS = 20_000;

/** pi cannot keep from the chosen entry (its own `/compact` has nothing to summarize); nothing was asked or written. */
export class PiCannotCutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PiCannotCutError";
  }
}

/**
 * Refuse when pi's own `/compact` has nothing to summarize at the plan's leaf (pi then emits no
 * `session_before_compact`, so the cut cannot be moved).
 * @throws {PiCannotCutError}
 */
export function assertPiCanCut(plan: CompactionPlan): void {
  const own = prepareCompaction(
    plan.session,
    plan.preparation.settings,
    plan.session,
    undefined,
    plan.analysis.pi.rules,
  );
  if (isPrepared(own)) return;
  throw new PiCannotCutError(
    vscode.l10n.t(
      "pi can keep from {0} only when its own /compact has something to summarize, and this context is within keepRecentTokens ({1} tokens). Choose an OpenAI-compatible or VS Code summarizer (piContext.summarizer.provider) to compact up to here now, or lower compaction.keepRecentTokens. Nothing was written.",
      plan.preparation.firstKeptEntryId,
      n(plan.preparation.settings.keepRecentTokens),
    ),
  );
}

/**
 * Before the running pi is asked: the cut checked on the file (an entry pi would not cut at is
 * refused with the nearest valid ones) and pi's limit ({@link assertPiCanCut}).
 * @throws `InvalidCutPointError`, `NothingToCompactError`, {@link PiCannotCutError}.
 */
export async function checkCutInPi(services: Services, file: string, keepFrom: string): Promise<void> {
  const config = services.config();
  const plan = await planCompaction(file, {
    agentDir: services.sessions.agentDir(),
    projectSettings: config.projectSettings,
    guardSeconds: 0,
    procRoot: null,
    surface: "vscode",
    pi: services.pi.current,
    maxOutputTokens: config.summarizer.openai.maxOutputTokens,
    keepFrom,
  });
  assertPiCanCut(plan);
}

/**
 * Compact `plan.file` up to `plan.options.keepFrom` with the user's pi: our preview, then the
 * headless pi with the live bridge does it (see the file comment).
 * @throws `NoNodeForPiError`, `PiRpcError` (pi did not start), `LiveSessionError`, or an Error when
 *   the bridge is turned off or did not come up.
 */
export async function compactUpToHereWithUserPi(
  services: Services,
  plan: CompactionPlan,
  options: { skipPreview: boolean; controller: AbortController },
): Promise<CompactCommandOutcome> {
  const file = plan.file;
  const keepFrom = plan.options.keepFrom!;
  if (!services.config().liveBridge.enabled)
    throw new Error(
      vscode.l10n.t(
        "your own pi compacts up to a chosen entry through the live bridge, which is turned off (piContext.liveBridge.enabled). Nothing was written.",
      ),
    );
  const runtime = await services.pi.runtime();
  const version = runtime.install.version;
  const extensions = services.liveBridge.headlessExtensions();
  const by: PreviewSummarizer = {
    name: vscode.l10n.t("your pi {0}", version),
    detailsLine: vscode.l10n.t(
      "your pi {0} (Node {1}) — pi compacts with its own prompts, model and API key, headless on the idle session with the live bridge loaded (pi's RPC compact alone cannot cut at a chosen entry); pi appends its own compaction entry, pi-context writes nothing.",
      version,
      runtime.nodeVersion,
    ),
    needsApiKey: false,
    price: pricePiCompactionPlan(plan, Date.now()),
  };
  if (!options.skipPreview && !(await confirmPreview(plan, by, false)))
    return { kind: "declined", file, stage: "preview" };
  // a headless pi must not meet a running one on the same file: the guard again, right before it starts
  assertAccess(plan.access, ACTIONS.compact, plan.options);
  services.log.info(
    `compact ${file}: up to ${keepFrom} by the user's pi ${version} (headless${extensions.length ? `, -e ${extensions.join(" ")}` : ", its installed bridge"})`,
  );
  const rpc = await PiRpc.start({
    runtime,
    sessionFile: file,
    cwd: plan.session.cwd ?? "",
    agentDir: plan.options.agentDir,
    extensions,
  });
  const own = rpc.pid !== undefined ? services.liveBridge.markHeadless(rpc.pid) : undefined;
  try {
    const deadline = Date.now() + BRIDGE_WAIT_MS;
    while (!services.liveBridge.announcedNow().some((a) => a.pid === rpc.pid)) {
      if (options.controller.signal.aborted)
        return { kind: "cancelled", file, message: vscode.l10n.t("Compaction cancelled. Nothing was written.") };
      if (Date.now() > deadline)
        throw new Error(
          vscode.l10n.t(
            "your pi {0} started, but its live bridge did not come up within {1} s. Nothing was written.",
            version,
            BRIDGE_WAIT_MS / 1000,
          ),
        );
      await new Promise((r) => setTimeout(r, 150));
    }
    const outcome = await services.liveBridge.routeCompaction(file, plan.customInstructions ?? "", {
      signal: options.controller.signal,
      skipPreview: true,
      keepFrom,
      title: planTitle(plan),
    });
    if (!outcome)
      throw new Error(vscode.l10n.t("your pi {0} went away before it could compact. Nothing was written.", version));
    // pi-context had the user's pi write it: the file's age is not another writer's
    if (outcome.kind === "compacted") {
      recordOwnWriteOf(file);
      return { ...outcome, by: "pi" };
    }
    return outcome;
  } finally {
    await rpc.close();
    own?.dispose();
  }
}
