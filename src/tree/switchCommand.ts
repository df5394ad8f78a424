/**
 * "Switch to Here…": through the live bridge, else `core/flows/switch.ts`. Everything that can
 * refuse without the user's input is checked before a question is asked.
 */

import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { runSwitchFlow, type SwitchChoice, type SwitchPlan } from "../core/flows/switch";
import { describeChange } from "../core/flows/watch";
import { UnsafeSessionWriteError } from "../core/flows/write";
import type { ActionRoute, RouteSwitchOptions, Services, SwitchCommandOutcome } from "../services";
import { streamingProgress } from "../ui/progress";
import * as notify from "../ui/notify";
import { entryWords, entryWordsOf } from "../viewModel/treeText";
import { showMessageText } from "./documents";
import type { Prompter } from "../ui/prompter";
import type { SessionTreeProvider } from "./provider";
import type { TreeRevealer } from "./reveal";
import { askChoice, confirmSummary, newLeafWords, questionContext } from "./switchQuestions";
import { askWithUserPi, switchWithUserPi } from "./switchWithPi";

/** Options of `piContext.tree.switchToHere` (each one given skips its question). */
export interface SwitchCommandOptions {
  summarize?: boolean;
  customInstructions?: string;
  label?: string;
  /** The session file (default: the current session). */
  file?: string;
  /** Do not offer the target's text in a notification (tests). */
  quiet?: boolean;
  /** *Anyway* after a refusal whose evidence is only probable or possible (`core/access/route.ts`). */
  force?: boolean;
}

/** The branch switch of one tree view (at most one runs at a time). */
export class SwitchCommand {
  private running: AbortController | undefined;

  constructor(
    private readonly services: Services,
    private readonly provider: SessionTreeProvider,
    private readonly prompter: Prompter,
    private readonly revealer: TreeRevealer,
  ) {}

  /** Cancel a running branch summary (same as the notification's Cancel); false when none runs. */
  cancel(): boolean {
    if (!this.running) return false;
    this.running.abort();
    return true;
  }

  /** @returns the outcome when the switch ended here, else our file route. */
  private async route(
    file: string,
    targetId: string,
    options: SwitchCommandOptions,
    mode: "ask" | "summary",
    live: RouteSwitchOptions,
  ): Promise<{ outcome: SwitchCommandOutcome } | { route: Extract<ActionRoute, { kind: "file" }> }> {
    const { services } = this;
    // *Anyway* runs once this switch has ended (one switch at a time)
    const retry = () => void this.run(targetId, { ...options, force: true }, mode);
    const routeOptions = { force: options.force === true, retry };
    let route = await services.access.route(file, ACTIONS.switch, routeOptions);
    if (route.kind === "bridge") {
      const outcome = await services.liveBridge.routeSwitch(file, targetId, live);
      if (outcome) {
        if (outcome.kind === "switched") {
          this.revealer.leafMoved();
          await services.sessions.refresh().catch(() => undefined);
        }
        return { outcome };
      }
      route = await services.access.route(file, ACTIONS.switch, routeOptions); // pi went away meanwhile
    }
    if (route.kind === "refuse")
      return { outcome: { kind: "error", file, errorKind: "live", message: route.message, actions: route.actions } };
    if (route.kind === "bridge")
      return {
        outcome: { kind: "error", file, errorKind: "bridge-unavailable", message: notify.bridgeSilent(route.pid) },
      };
    return { route };
  }

  /** `summarize` in the options skips the questions; `targetId` undefined: none was picked. */
  async run(
    targetId: string | undefined,
    options: SwitchCommandOptions,
    mode: "ask" | "summary",
  ): Promise<SwitchCommandOutcome> {
    const { services, provider } = this;
    if (this.running) {
      void notify.info(vscode.l10n.t("a branch switch is already running."));
      return { kind: "busy" };
    }
    const file = options.file ?? provider.file ?? services.sessions.current?.file;
    if (!targetId || !file) {
      void notify.info(vscode.l10n.t("pick an entry in the Pi Session view to switch to."));
      return { kind: "declined" };
    }
    const config = services.config();
    const controller = new AbortController();
    this.running = controller;
    void vscode.commands.executeCommand("setContext", "piContext.switching", true);
    let given: SwitchChoice | undefined =
      options.summarize !== undefined
        ? {
            summarize: options.summarize,
            ...(options.customInstructions ? { customInstructions: options.customInstructions } : {}),
            ...(options.label ? { label: options.label } : {}),
          }
        : undefined;
    const ask =
      (piLabel: string | undefined, running = false) =>
      async (plan: SwitchPlan, changed: boolean): Promise<SwitchChoice | undefined> => {
        if (given) return given;
        const ctx = questionContext(services, this.prompter, piLabel, running);
        return mode === "summary" ? confirmSummary(plan, changed, ctx) : askChoice(plan, changed, ctx);
      };
    let planned: SwitchPlan | undefined;
    try {
      const routed = await this.route(file, targetId, options, mode, {
        ...(given ? { given } : {}),
        ask: ask(vscode.l10n.t("pi (with its own model)"), true),
        signal: controller.signal,
        ...(options.quiet ? { quiet: true } : {}),
      });
      if ("outcome" in routed) return routed.outcome;
      const { route } = routed;
      const planOptions = {
        agentDir: services.sessions.agentDir(),
        projectSettings: config.projectSettings,
        ...services.access.flowOptions(route.forced),
        pi: services.pi.current,
      };
      // the user's own pi summarizes: a summary is written by pi itself, run headless (switchWithPi.ts)
      if (route.summarizer === "user-pi") {
        const choice = await askWithUserPi(services, file, targetId, planOptions, ask, given);
        if (choice.kind !== "choice") return choice.outcome;
        if (choice.summarize) {
          const byPi = await switchWithUserPi(services, file, targetId, choice.choice, controller.signal);
          if (byPi.kind === "switched") {
            this.revealer.leafMoved();
            await services.sessions.refresh().catch(() => undefined);
            const shown = services.sessions.current;
            const where = entryWordsOf(byPi.newLeafId, shown?.file === file ? shown.session : undefined);
            if (!options.quiet) offerHeadlessResult(services.pi.current.install?.version, byPi, where);
          }
          return byPi;
        }
        given = choice.choice;
      }
      const outcome = await runSwitchFlow(
        file,
        targetId,
        given ?? { summarize: false },
        () => services.summarizers.get(),
        planOptions,
        {
          signal: controller.signal,
          decide: async (plan, changed) => {
            planned = plan;
            // refusals before questions (a no-op never gets here)
            if (plan.writeBlocker) throw new UnsafeSessionWriteError(plan.writeBlocker);
            return ask(undefined)(plan, changed);
          },
          onSessionChanged: (stage) => {
            const text = describeChange(stage);
            services.log.info(`switch ${file}: ${text}; planning again`);
            if (stage !== "preview") void notify.info(vscode.l10n.t("{0}. Planning the switch again.", text));
          },
          onUnauthorized: async (error, s) => {
            services.log.warn(`switch ${file}: ${error.message}`);
            this.prompter.apiKey(services.summarizers.keyOrigin());
            return services.summarizers.withNewKey(s, error);
          },
          around: (task) =>
            Promise.resolve(
              vscode.window.withProgress(
                {
                  location: vscode.ProgressLocation.Notification,
                  title: vscode.l10n.t(
                    "Switching to {0}",
                    planned ? entryWords(planned.target) : vscode.l10n.t("the entry"),
                  ),
                  cancellable: true,
                },
                (progress, token) => {
                  token.onCancellationRequested(() => controller.abort());
                  const stream = streamingProgress(
                    progress,
                    vscode.l10n.t("receiving the branch summary"),
                    vscode.l10n.t("summarizing the branch you leave…"),
                  );
                  return task({ signal: controller.signal, onText: stream.onText });
                },
              ),
            ),
        },
      );
      if (outcome.kind === "declined") return { kind: "declined", file };
      const r = outcome.result;
      const text = r.editorText;
      if (outcome.kind === "noop") {
        void notify.info(vscode.l10n.t("the session is already at {0}.", entryWords(outcome.plan.target)));
        return { kind: "noop", file, targetId, ...(text !== undefined ? { editorText: text } : {}) };
      }
      services.log.info(
        `switch ${file}: → ${r.newLeafId ?? "root"}; wrote ${r.entries.map((e) => `${e.type} ${e.id}`).join(", ") || "nothing"} (${r.bytesBefore} → ${r.bytesAfter} bytes)`,
      );
      // written: nothing after this point may report the switch as failed
      this.revealer.leafMoved();
      await services.sessions.refresh().catch(() => undefined);
      await this.revealer
        .revealLeafIfVisible({ select: true })
        .catch((error: unknown) => services.log.warn(`switch ${file}: revealing the new leaf: ${String(error)}`));
      if (!options.quiet) offerResult(outcome.plan, r.entries.length, text);
      return {
        kind: "switched",
        file,
        targetId,
        newLeafId: r.newLeafId,
        entries: r.entries.map((e) => ({ type: e.type, id: e.id, parentId: e.parentId ?? null })),
        ...(text !== undefined ? { editorText: text } : {}),
      };
    } catch (error) {
      return report(services, file, error, () => void this.run(targetId, { ...options, force: true }, mode));
    } finally {
      this.running = undefined;
      void vscode.commands.executeCommand("setContext", "piContext.switching", false);
    }
  }
}

/** Tell the user what happened; for a user-message target offer its text (pi puts it into the editor). */
function offerResult(plan: SwitchPlan, written: number, text: string | undefined): void {
  const where = newLeafWords(plan);
  const base =
    written > 0
      ? vscode.l10n.t("moved the leaf to {0}. pi resumes there the next time it opens the session.", where)
      : vscode.l10n.t("the session already resumes at {0}.", where);
  if (text === undefined) void notify.info(base);
  else offerText(text, plan.target, (preview) => vscode.l10n.t("{0} The message you picked: “{1}”", base, preview));
}

/** pi ran without a terminal UI: a user message's text was put into no editor. */
function offerHeadlessResult(
  version: string | undefined,
  outcome: Extract<SwitchCommandOutcome, { kind: "switched" }>,
  where: string,
): void {
  const wrote = outcome.entries.length
    ? vscode.l10n.t(" (wrote {0})", outcome.entries.map((e) => e.type.replace("_", " ")).join(" + "))
    : "";
  const base = vscode.l10n.t("your pi{0} switched to {1}{2}.", version ? ` ${version}` : "", where, wrote);
  const text = outcome.editorText;
  if (text === undefined) void notify.info(base);
  else
    offerText(text, undefined, (preview) =>
      vscode.l10n.t(
        "{0} The message you picked was not sent again (pi ran without its terminal): “{1}”",
        base,
        preview,
      ),
    );
}

/** A notification of `message(preview)` (the text's first 80 characters on one line) with Copy Text / Show Text. */
function offerText(
  text: string,
  target: Parameters<typeof showMessageText>[1],
  message: (preview: string) => string,
): void {
  const preview = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  void notify
    .info(message(preview.replace(/\s+/g, " ")), vscode.l10n.t("Copy Text"), vscode.l10n.t("Show Text"))
    .then(async (choice) => {
      if (choice === vscode.l10n.t("Copy Text")) await vscode.env.clipboard.writeText(text);
      else if (choice === vscode.l10n.t("Show Text")) await showMessageText(text, target);
    });
}

/** One message for an error (never a loop), and the outcome. */
function report(services: Services, file: string, error: unknown, anyway: () => void): SwitchCommandOutcome {
  return notify.reportFlowFailure(services.log, {
    operation: vscode.l10n.t("branch switch"),
    logPrefix: "switch",
    file,
    error,
    configActions: [vscode.l10n.t("Set API Key…"), vscode.l10n.t("Open Settings")],
    setApiKey: () => services.actions.setApiKey(),
    refused: (e) => services.access.showRefusal(e, file, anyway),
  });
}
