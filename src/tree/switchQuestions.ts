/**
 * The questions of "Switch to Here…": pi's "Summarize branch?" and the summary confirmation. A missing
 * API key is asked for after the confirmation; Escape there returns to the question, nothing sent.
 */

import * as vscode from "vscode";
import { SummarizerError, type Summarizer } from "../core/flows/summarizer";
import { fitSwitch, plannedWrites, type SwitchChoice, type SwitchPlan } from "../core/flows/switch";
import { describeFinding } from "../core/rules/pairing";
import type { Services } from "../services";
import { formatTokens, pluralText } from "../shared/format";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import { describeRecord, entryWords } from "../viewModel/treeText";
import { KIND_ICONS } from "./icons";
import type { Prompter } from "../ui/prompter";

/** Entries listed in the "with summary" confirmation (the rest are counted). */
const CONFIRM_LIST_MAX = 30;

/** An error about the summarizer's settings, with a way to them. */
export function offerSettings(message: string): void {
  void notify.error(message, vscode.l10n.t("Open Settings")).then((choice) => {
    if (choice === vscode.l10n.t("Open Settings"))
      void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.summarizer");
  });
}

/** What the questions need to know about the summarizer. */
export interface QuestionContext {
  prompter: Prompter;
  /** Its name, whether it still needs an API key (and for which origin), or why it cannot run. */
  summarizer(): Promise<{ label: string; needsKey: boolean; origin: string; problem?: string }>;
  /** Make it ready to send: asks for the API key when one is needed. False: cancelled (nothing stored). */
  ready(): Promise<boolean>;
  /** Why the branch summary of `plan` cannot be sent (does not fit the summarizer), with what to change; else undefined. */
  fitProblem(plan: SwitchPlan): Promise<string | undefined>;
  /** The switch runs in a running pi through the live bridge (pi's own /tree navigation); not for the user's pi run headless. */
  bridge?: boolean;
}

/** A pi with its own model (running, or the user's pi headless), else ours; the key is never recorded. */
export function questionContext(
  services: Services,
  prompter: Prompter,
  piLabel: string | undefined,
  running = false,
): QuestionContext {
  // a pi summarizes with its own model: the running pi (live bridge) or the user's pi run headless;
  // only the running one moves its leaf in memory
  const bridge = piLabel !== undefined;
  return {
    prompter,
    bridge: running,
    summarizer: async () => {
      if (piLabel !== undefined) return { label: piLabel, needsKey: false, origin: "" };
      const origin = services.summarizers.keyOrigin();
      try {
        const s = await services.summarizers.get({ allowMissingKey: true });
        return { label: s.label, needsKey: s.needsApiKey === true, origin };
      } catch (error) {
        if (error instanceof SummarizerError)
          return { label: vscode.l10n.t("the summarizer"), needsKey: false, origin, problem: error.message };
        throw error;
      }
    },
    ready: async () => {
      if (bridge) return true;
      let s: Summarizer;
      try {
        s = await services.summarizers.get({ allowMissingKey: true });
      } catch (error) {
        if (!(error instanceof SummarizerError)) throw error;
        offerSettings(error.message);
        return false;
      }
      if (!s.needsApiKey) return true;
      prompter.apiKey(services.summarizers.keyOrigin());
      return (await services.summarizers.ready(s)) !== undefined;
    },
    fitProblem: async (plan) => {
      if (bridge) return undefined; // pi summarizes with its own model
      try {
        const s = await services.summarizers.get({ allowMissingKey: true });
        return (await fitSwitch(plan, { summarize: true }, s))?.problem?.message;
      } catch (error) {
        if (error instanceof SummarizerError) return error.message;
        throw error;
      }
    },
  };
}

/** The new position in words: the new leaf's text, or the start of the session. */
export function newLeafWords(plan: SwitchPlan): string {
  return plan.newLeafId === null
    ? vscode.l10n.t("the start of the session")
    : entryWords(plan.session.byId.get(plan.newLeafId));
}

function ancestorWords(plan: SwitchPlan): string {
  return plan.collection.commonAncestorId === null
    ? vscode.l10n.t("the start of the session")
    : entryWords(plan.session.byId.get(plan.collection.commonAncestorId));
}

/** The questions' placeholder: how much is left, where the leaf goes back to. */
function leavingText(plan: SwitchPlan): string {
  return vscode.l10n.t(
    "Leaving {0}, back to {1}{2}",
    pluralText(plan.collection.entries.length, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
    ancestorWords(plan),
    plan.returnsText ? vscode.l10n.t("; the leaf moves to the entry before {0}", entryWords(plan.target)) : "",
  );
}

/** Tool results without their call make providers reject requests: go on only on "Switch Anyway". */
export async function acceptUnpaired(plan: SwitchPlan, ctx: QuestionContext): Promise<boolean> {
  const unpaired = plan.pairingErrors ?? [];
  if (unpaired.length === 0) return true;
  type Item = vscode.QuickPickItem & { action: "go" | "cancel" };
  const where = newLeafWords(plan);
  const items: Item[] = [
    {
      action: "cancel",
      label: vscode.l10n.t("$(close) Cancel"),
      detail: vscode.l10n.t("Nothing is written. Switch to another entry instead."),
    },
    {
      action: "go",
      label: vscode.l10n.t("$(warning) Switch Anyway"),
      detail: vscode.l10n.t(
        "Then run Pi Context: Check Session Health: its repair omits these results from the context (the file keeps them).",
      ),
    },
    ...unpaired.map((f) => ({
      action: "cancel" as const,
      label: vscode.l10n.t("$(error) tool result {0}", f.resultEntryId ?? "?"),
      detail: describeFinding(f),
    })),
  ];
  const pick = await ctx.prompter.pick(items, {
    title: vscode.l10n.t(
      "At {0} pi would send {1} without their tool call: providers reject such requests",
      where,
      pluralText(unpaired.length, vscode.l10n.t("{0} tool result"), vscode.l10n.t("{0} tool results")),
    ),
    placeholder: vscode.l10n.t("Switch anyway?"),
  });
  return pick?.action === "go";
}

/** pi's "Summarize branch?" plus an optional label; a summary makes the summarizer ready first. */
export async function askChoice(
  plan: SwitchPlan,
  changed: boolean,
  ctx: QuestionContext,
): Promise<SwitchChoice | undefined> {
  if (!(await acceptUnpaired(plan, ctx))) return undefined;
  const leaving = plan.collection.entries.length;
  if (plan.skipPrompt || leaving === 0) return { summarize: false };
  const info = await ctx.summarizer();
  const target = entryWords(plan.target);
  const where = newLeafWords(plan);
  const messages = plan.preparation.messages.length;
  let label: string | undefined;
  for (;;) {
    type Item = vscode.QuickPickItem & { action: "none" | "summarize" | "custom" | "label" };
    const summaryDetail =
      messages === 0
        ? vscode.l10n.t(
            "Nothing you leave converts to a message: pi's “No content to summarize” is written after {0}; no model is called.",
            where,
          )
        : info.problem
          ? vscode.l10n.t("Not available: {0}", info.problem)
          : vscode.l10n.t(
              "{0} summarizes the {1} you leave ({2}, ≈{3} tokens) into a branch summary after {4}.{5}",
              info.label,
              pluralText(leaving, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
              pluralText(messages, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
              formatTokens(plan.preparation.totalTokens),
              where,
              info.needsKey
                ? vscode.l10n.t(" It needs an API key for {0}: you are asked for it first.", info.origin)
                : "",
            );
    const items: Item[] = [
      {
        action: "none",
        label: vscode.l10n.t("No summary"),
        // pi's /tree without a summary only moves its leaf in memory (SessionManager.branch): nothing
        // is written until its next entry, so a pi that quits before that resumes at the old leaf
        detail: ctx.bridge
          ? vscode.l10n.t(
              "The running pi moves its leaf to {0}, like its /tree: it writes nothing until its next entry, so if pi quits before you send a message it resumes at the old leaf.",
              where,
            )
          : plannedWrites(plan, { summarize: false, ...(label ? { label } : {}) }).includes("leaf-marker")
            ? vscode.l10n.t("Move the leaf to {0}; a marker entry (no model context) makes pi resume there.", where)
            : vscode.l10n.t("Move the leaf to {0}.", where),
      },
      {
        action: "summarize",
        label: vscode.l10n.t("Summarize"),
        ...(info.needsKey && messages > 0 ? { description: vscode.l10n.t("asks for the API key first") } : {}),
        detail: summaryDetail,
      },
      {
        action: "custom",
        label: vscode.l10n.t("Summarize with custom prompt"),
        ...(info.needsKey && messages > 0 ? { description: vscode.l10n.t("asks for the API key first") } : {}),
        detail: vscode.l10n.t("Add your own focus for the summary."),
      },
      {
        action: "label",
        label: label ? vscode.l10n.t("$(tag) Label: {0}", iconLabelText(label)) : vscode.l10n.t("$(tag) Add a label…"),
        detail: label
          ? vscode.l10n.t("Change or remove the label")
          : vscode.l10n.t("Optional: label the new position (pi shows labels in /tree)."),
      },
    ];
    const pick = await ctx.prompter.pick(items, {
      title: vscode.l10n.t(
        "{0}Switch to {1}: summarize the branch you leave?",
        changed ? vscode.l10n.t("The session changed — ") : "",
        target,
      ),
      placeholder: leavingText(plan),
    });
    if (!pick) return undefined;
    if (pick.action === "label") {
      const value = await ctx.prompter.input({
        title: vscode.l10n.t("Label the New Position"),
        prompt: vscode.l10n.t("pi shows labels in /tree. Empty: no label."),
        value: label ?? "",
      });
      if (value !== undefined) label = value.trim() || undefined;
      continue;
    }
    const base: SwitchChoice = { summarize: pick.action !== "none", ...(label ? { label } : {}) };
    if (pick.action === "none") return base;
    if (messages > 0) {
      const problem = info.problem ?? (await ctx.fitProblem(plan));
      if (problem) {
        offerSettings(problem);
        continue;
      }
      if (!(await ctx.ready())) continue; // no key given: back to the choice, nothing sent
    }
    if (pick.action === "summarize") return base;
    const instructions = await ctx.prompter.input({
      title: vscode.l10n.t("Custom Summarization Instructions"),
      prompt: vscode.l10n.t("What the branch summary should focus on (appended as “Additional focus”)."),
    });
    if (instructions === undefined) continue; // pi: back to the choice
    return { ...base, ...(instructions.trim() ? { customInstructions: instructions.trim() } : {}) };
  }
}

/** What will be sent, to whom, where it goes; confirmed before anything is sent. */
export async function confirmSummary(
  plan: SwitchPlan,
  changed: boolean,
  ctx: QuestionContext,
): Promise<SwitchChoice | undefined> {
  if (!(await acceptUnpaired(plan, ctx))) return undefined;
  const leaving = plan.collection.entries.length;
  const sent = plan.preparation.messages.map((m) => m.record);
  const target = entryWords(plan.target);
  const where = newLeafWords(plan);
  type Item = vscode.QuickPickItem & { action: "go" | "custom" | "plain" | "cancel" | "entry" };
  for (;;) {
    const known = await ctx.summarizer();
    // the request is counted before asking: one that does not fit says so here, with what to change
    const tooLarge = !known.problem && sent.length > 0 ? await ctx.fitProblem(plan) : undefined;
    const info = tooLarge ? { ...known, problem: tooLarge } : known;
    const items: Item[] = [];
    if (leaving === 0)
      items.push({
        action: "go",
        label: vscode.l10n.t("$(check) Switch"),
        detail: vscode.l10n.t(
          "Nothing is left behind, so there is nothing to summarize: the leaf moves to {0}. Nothing is sent.",
          where,
        ),
      });
    else if (sent.length === 0)
      items.push({
        action: "go",
        label: vscode.l10n.t("$(check) Switch and Write the Branch Summary"),
        detail: vscode.l10n.t(
          "Nothing you leave converts to a message: pi's “No content to summarize” is written after {0}; no model is called.",
          where,
        ),
      });
    else {
      const key = info.needsKey
        ? vscode.l10n.t(" {0} needs an API key: you enter it next (kept in VS Code's secret storage).", info.origin)
        : "";
      items.push({
        action: "go",
        label: info.needsKey
          ? vscode.l10n.t("$(key) Enter the API Key, Then Summarize and Switch")
          : vscode.l10n.t("$(check) Summarize and Switch"),
        description: info.label,
        detail: info.problem
          ? vscode.l10n.t("Not available: {0}", info.problem)
          : vscode.l10n.t(
              "One request: {0}, ≈{1} tokens. The branch summary goes after {2}, where pi resumes.{3}",
              pluralText(sent.length, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
              formatTokens(plan.preparation.totalTokens),
              where,
              key,
            ),
      });
      items.push({
        action: "custom",
        label: vscode.l10n.t("$(edit) Summarize with Custom Instructions…"),
        detail: vscode.l10n.t("Add your own focus for the summary, then send it."),
      });
    }
    if (leaving > 0)
      items.push({
        action: "plain",
        label: vscode.l10n.t("$(arrow-right) Switch Without a Summary"),
        detail: vscode.l10n.t("Only move the leaf to {0}; nothing is sent.", where),
      });
    items.push({
      action: "cancel",
      label: vscode.l10n.t("$(close) Cancel"),
      detail: vscode.l10n.t("Nothing is sent, nothing is written."),
    });
    if (sent.length > 0) {
      items.push({
        action: "entry",
        kind: vscode.QuickPickItemKind.Separator,
        label: vscode.l10n.t(
          "Sent to the summarizer: {0} of the {1} you leave",
          pluralText(sent.length, vscode.l10n.t("{0} message"), vscode.l10n.t("{0} messages")),
          pluralText(leaving, vscode.l10n.t("{0} entry"), vscode.l10n.t("{0} entries")),
        ),
      });
      for (const r of sent.slice(0, CONFIRM_LIST_MAX)) {
        const d = describeRecord(r);
        items.push({ action: "entry", label: `$(${KIND_ICONS[d.kind]}) ${iconLabelText(d.text)}`, description: r.id });
      }
      if (sent.length > CONFIRM_LIST_MAX)
        items.push({
          action: "entry",
          label: vscode.l10n.t(
            "… and {0}",
            pluralText(
              sent.length - CONFIRM_LIST_MAX,
              vscode.l10n.t("{0} more message"),
              vscode.l10n.t("{0} more messages"),
            ),
          ),
        });
    }
    const pick = await ctx.prompter.pick(items, {
      title: vscode.l10n.t(
        "{0}Switch to {1} with a branch summary?",
        changed ? vscode.l10n.t("The session changed — ") : "",
        target,
      ),
      placeholder: leavingText(plan),
      keepOpen: (item) => item.action === "entry",
    });
    if (!pick || pick.action === "cancel") return undefined;
    if (pick.action === "plain") return { summarize: false };
    if (sent.length === 0) return { summarize: true };
    if (info.problem) {
      offerSettings(info.problem);
      continue;
    }
    if (!(await ctx.ready())) continue; // no key given: back here, nothing sent
    if (pick.action === "go") return { summarize: true };
    const instructions = await ctx.prompter.input({
      title: vscode.l10n.t("Custom Summarization Instructions"),
      prompt: vscode.l10n.t("What the branch summary should focus on (appended as “Additional focus”)."),
    });
    if (instructions === undefined) continue;
    return { summarize: true, ...(instructions.trim() ? { customInstructions: instructions.trim() } : {}) };
  }
}
