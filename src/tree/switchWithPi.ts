/**
 * "Switch to Here…" with the summary by the user's own pi, headless with the live bridge: pi writes
 * its own `branch_summary`, pi-context nothing. Marked headless: no "live" state, no version warning.
 */

import * as fs from "node:fs";
import { recordOwnWriteOf } from "../core/access/ownWrites";
import { ACTIONS } from "../core/access/route";
import { assertAccess } from "../core/access/words";
import {
  planSwitch,
  willSummarize,
  type SwitchChoice,
  type SwitchPlan,
  type SwitchPlanOptions,
} from "../core/flows/switch";
import { PiRpc } from "../core/pi/rpc";
import { sessionInfoOf } from "../core/read/store";
import type { Services, SwitchCommandOutcome } from "../services";
import * as l10n from "@vscode/l10n";

/** How long to wait for the headless pi's bridge to announce itself (ms). */
const BRIDGE_WAIT_MS = 20_000;

/** The question's answer, or the outcome when the user declined. */
export type PiChoice =
  { kind: "choice"; choice: SwitchChoice; summarize: boolean } | { kind: "done"; outcome: SwitchCommandOutcome };

/** Nothing starts yet. @throws {LiveSessionError} when live (a headless pi must not meet a running one). */
export async function askWithUserPi(
  services: Services,
  file: string,
  targetId: string,
  options: SwitchPlanOptions,
  ask: (piLabel: string | undefined) => (plan: SwitchPlan, changed: boolean) => Promise<SwitchChoice | undefined>,
  given?: SwitchChoice,
): Promise<PiChoice> {
  const plan = await planSwitch(file, targetId, options);
  if (plan.noop) return { kind: "choice", choice: given ?? { summarize: false }, summarize: false };
  assertAccess(plan.access, ACTIONS.switch, options);
  const version = services.pi.current.install?.version;
  const choice =
    given ?? (await ask(l10n.t("your pi{0} (with its own model)", version ? ` ${version}` : ""))(plan, false));
  if (!choice) return { kind: "done", outcome: { kind: "declined", file } };
  return { kind: "choice", choice, summarize: willSummarize(plan, choice) };
}

/** @throws `NoNodeForPiError`, `PiRpcError`, an Error when no pi is found or the bridge is off or did not come up. */
export async function switchWithUserPi(
  services: Services,
  file: string,
  targetId: string,
  choice: SwitchChoice,
  signal: AbortSignal,
): Promise<SwitchCommandOutcome> {
  if (!services.config().liveBridge.enabled)
    throw new Error(
      "a branch summary by your own pi runs through the live bridge, which is turned off (piContext.liveBridge.enabled). Nothing was written.",
    );
  const runtime = await services.pi.runtime();
  const cwd = (await sessionInfoOf(file).catch(() => undefined))?.cwd ?? "";
  const extensions = services.liveBridge.headlessExtensions();
  services.log.info(
    `switch ${file}: by the user's pi ${runtime.install.version} (headless${extensions.length ? `, -e ${extensions.join(" ")}` : ", its installed bridge"})`,
  );
  const rpc = await PiRpc.start({
    runtime,
    sessionFile: file,
    cwd,
    agentDir: services.sessions.agentDir(),
    extensions,
  });
  const own = rpc.pid !== undefined ? services.liveBridge.markHeadless(rpc.pid) : undefined;
  try {
    // the headless pi may restart its extensions right after start-up (a new bridge, a new token): a
    // connection closed before pi wrote anything is tried once more on the new bridge
    for (let attempt = 1; ; attempt++) {
      const deadline = Date.now() + BRIDGE_WAIT_MS;
      // our own pi's bridge: its announcement names its pid
      while (!services.liveBridge.announcedNow().some((a) => a.pid === rpc.pid)) {
        if (signal.aborted)
          return { kind: "cancelled", file, message: l10n.t("Branch switch cancelled. Nothing was written.") };
        if (Date.now() > deadline)
          throw new Error(
            `your pi ${runtime.install.version} started, but its live bridge did not come up within ${BRIDGE_WAIT_MS / 1000} s. Nothing was written.`,
          );
        await new Promise((r) => setTimeout(r, 150));
      }
      const sizeBefore = fileSize(file);
      const outcome = await services.liveBridge.routeSwitch(file, targetId, {
        given: choice,
        ask: async () => choice,
        signal,
        quiet: true,
      });
      if (!outcome)
        throw new Error(`your pi ${runtime.install.version} went away before it could switch. Nothing was written.`);
      const closedEarly =
        outcome.kind === "error" && outcome.errorKind === "closed" && fileSize(file) === sizeBefore && !signal.aborted;
      // pi-context had the user's pi write it: the file's age is not another writer's
      if (outcome.kind === "switched") recordOwnWriteOf(file);
      if (!closedEarly || attempt >= 2) return outcome;
      services.log.info(`switch ${file}: the headless pi's bridge closed before pi wrote anything; trying once more`);
    }
  } finally {
    await rpc.close();
    own?.dispose();
  }
}

/** The file's size in bytes (-1 when it cannot be read): whether pi wrote anything. */
function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return -1;
  }
}
