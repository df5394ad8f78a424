/**
 * `pi-context switch`: "Switch to Here…" without VS Code (same `core/flows/switch.ts`), for
 * scripts and end-to-end tests.
 *
 *   pi-context switch <session.jsonl> <entryId> [--summarize [--instructions TEXT]] [--label TEXT]
 *       [--dry-run] [--json] [--base-url URL] [--model ID] [--summarizer-window N]
 *       [--max-output-tokens N] [--no-stream] [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR]
 *       [--project-settings auto|always|never] [--context-window N]
 *
 * The summarizer's API key comes from `PI_CONTEXT_API_KEY` or `OPENAI_API_KEY` (never a flag); base
 * URL and model default to `PI_CONTEXT_BASE_URL` / `PI_CONTEXT_MODEL`, then OpenAI / `gpt-4o-mini`
 * (as `pi-context compact`). Exit codes: 0 done (or dry run / nothing to do), 1 refused or failed
 * (nothing written), 2 usage.
 */

import { clipLabel } from "../core/rules/sessionLabel";
import { describeFinding, type PairingFinding } from "../core/rules/pairing";
import * as path from "node:path";
import { describeChange } from "../core/flows/watch";
import { ACTIONS } from "../core/access/route";
import { describeAccess } from "../core/access/words";
import { isCancellation, SummarizerError, type Summarizer } from "../core/flows/summarizer";
import {
  branchSummaryRequestOf,
  fitSwitch,
  planSwitch,
  plannedWrites,
  runSwitchFlow,
  willSummarize,
  type SwitchChoice,
  type SwitchPlan,
  type SwitchPlanOptions,
} from "../core/flows/switch";
import { branchBudgetText, isBranchBudgetLimited } from "../core/rules/branch";
import { entryWords } from "../viewModel/treeText";
import { formatCount as n, nothingWritten, plural } from "../shared/format";
import { lineText } from "../shared/untrusted";
import {
  errorText,
  analyzeOptionsFrom,
  checkFlags,
  formatUsage,
  intFlag,
  parseArgs,
  stringFlag,
  UsageError,
  type CliCommand,
  userPiFrom,
} from "./args";
import { cliRoute, connectRoute, piName, type CliRoute } from "./route";
import { summarizerFromFlags, SUMMARIZER_FLAGS } from "./summarizer";

export const SWITCH_USAGE = `pi-context switch <session.jsonl> <entryId> [--summarize [--instructions TEXT]] [--label TEXT] [--dry-run]
                  [--allow-unpaired] [--json] [--base-url URL] [--model ID] [--summarizer-window N] [--max-output-tokens N]
                  [--no-stream] [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR]
                  [--project-settings auto|always|never] [--context-window N] [--pi PATH]
  API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY (environment only)`;

/** The plan as text (the dry run and the preview of `pi-context switch`). */
export function formatSwitchPlan(plan: SwitchPlan, choice: SwitchChoice, extra: string[] = []): string {
  const writes = plannedWrites(plan, choice);
  const p = plan.preparation;
  const words = (id: string | null) => (id === null ? "" : ` ${entryWords(plan.session.byId.get(id))}`);
  const lines = [
    `session       ${plan.session.name ? `${clipLabel(plan.session.name)} — ` : ""}${plan.file}`,
    `target        ${plan.target.id} (${plan.target.type === "message" ? `${plan.target.role} message` : plan.target.type.replace(/_/g, " ")})${words(plan.target.id)}`,
    `leaf          ${plan.fileLeafId ?? "(none)"}${plan.oldLeafId !== plan.fileLeafId ? ` (a Pi Context leaf marker on ${plan.oldLeafId ?? "root"})` : ""} → ${plan.noop ? "unchanged (already there)" : plan.newLeafId === null ? "before the first entry (root)" : `${plan.newLeafId}${words(plan.newLeafId)}`}`,
  ];
  if (plan.returnsText)
    lines.push(
      `text back     ${plan.editorText !== undefined ? JSON.stringify(plan.editorText.length > 200 ? `${plan.editorText.slice(0, 199)}…` : plan.editorText) : "(none)"} (pi puts a user message target's text into the editor)`,
    );
  lines.push(
    `abandoned     ${plural(plan.collection.entries.length, "entry")} back to ${plan.collection.commonAncestorId ?? "(no common ancestor)"}; ${plural(p.messages.length, "message")}, ≈${n(p.totalTokens)} tokens; ${isBranchBudgetLimited(plan.budget) ? "pi's" : "pi has"} ${branchBudgetText(plan.contextWindow, plan.reserveTokens)}`,
  );
  if (willSummarize(plan, choice)) {
    lines.push(`read files    ${p.readFiles.length ? p.readFiles.join(", ") : "(none)"}`);
    lines.push(`modified      ${p.modifiedFiles.length ? p.modifiedFiles.join(", ") : "(none)"}`);
    if (choice.customInstructions) lines.push(`instructions  ${choice.customInstructions}`);
  } else if (choice.summarize && !plan.noop)
    lines.push("summary       none: nothing was left behind (pi writes no branch summary then)");
  lines.push(
    `writes        ${writes.length ? writes.join(" + ") : "nothing"}${writes[0] === "leaf-marker" ? " (a custom entry with no model context, so pi resumes at the new leaf)" : ""}`,
  );
  lines.push(...extra);
  if (plan.pairingErrors && writes.length)
    for (const f of plan.pairingErrors) lines.push(`unpaired      ${describeFinding(f)}`);
  if (plan.access.strength !== "none" && writes.length)
    lines.push(`live          ${describeAccess(plan.access, ACTIONS.switch, [], plan.options.surface)}`);
  return lines.map(lineText).join("\n"); // one line each, whatever a session string holds
}

const SWITCH_FLAGS = new Set([
  "summarize",
  "allow-unpaired",
  "instructions",
  "label",
  "dry-run",
  "json",
  ...SUMMARIZER_FLAGS,
  "force",
  "guard-seconds",
  "agent-dir",
  "cwd",
  "project-settings",
  "context-window",
  "pi",
]);

/**
 * The refusal of a switch to a context whose tool results pi would send without their call: what,
 * where, and the two ways on.
 */
function unpairedRefusal(plan: SwitchPlan, unpaired: readonly PairingFinding[]): Error {
  return new Error(
    `refused: at ${plan.newLeafId ?? "the start of the session"} pi would send ${plural(unpaired.length, "tool result")} without ${unpaired.length === 1 ? "its" : "their"} call (${unpaired.map((f) => f.resultEntryId).join(", ")}), and providers reject such requests. Switch to another entry, or pass --allow-unpaired and then run pi-context doctor --repair, which omits them from the context (the file keeps them).`,
  );
}

/** `pi-context switch`. */
export const switchCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["summarize", "dry-run", "json", "no-stream", "force", "allow-unpaired"]));
  const [file, entryId] = args.positional;
  if (!file || !entryId || args.positional.length > 2) throw new UsageError(`usage:\n${formatUsage(SWITCH_USAGE, 2)}`);
  checkFlags(args, SWITCH_FLAGS, SWITCH_USAGE);
  if (args.flags.has("instructions") && !args.flags.has("summarize"))
    throw new UsageError("--instructions needs --summarize.");
  const env = process.env;
  const analyze = analyzeOptionsFrom(args, env);
  const pi = await userPiFrom(args, env);
  const json = args.flags.has("json");
  const dryRun = args.flags.has("dry-run");
  const absolute = path.resolve(file);
  const choice: SwitchChoice = { summarize: args.flags.has("summarize") };
  const instructions = stringFlag(args, "instructions")?.trim();
  if (instructions) choice.customInstructions = instructions;
  const label = stringFlag(args, "label")?.trim();
  if (label) choice.label = label;
  // who has the session open decides the route, before any question or request
  const routed = await cliRoute(absolute, ACTIONS.switch, {
    agentDir: analyze.agentDir,
    guardSeconds: intFlag(args, "guard-seconds") ?? 30,
    force: args.flags.has("force"),
  });
  const options: SwitchPlanOptions = {
    agentDir: analyze.agentDir,
    projectSettings: analyze.projectSettings,
    ...(analyze.cwd ? { cwd: analyze.cwd } : {}),
    ...(analyze.contextWindow !== undefined ? { contextWindow: analyze.contextWindow } : {}),
    ...routed.flowOptions,
    surface: "cli",
    pi,
  };
  const { maxOutputTokens, model, make: makeSummarizer } = summarizerFromFlags(args, env);

  try {
    if (dryRun)
      return await dryRunSwitch(absolute, entryId, choice, options, {
        maxOutputTokens,
        makeSummarizer,
        json,
        out,
        err,
      });
    if (routed.route.kind === "bridge" && routed.announcement)
      return await switchInPi(absolute, entryId, choice, routed, { json, out, err });
    if (routed.route.kind === "refuse") {
      if (json) out(JSON.stringify({ switched: false, refused: "in-use", access: routed.access }, null, 2));
      err(routed.refusal!);
      return 1;
    }
    let streamed = false;
    const outcome = await runSwitchFlow(absolute, entryId, choice, async () => makeSummarizer(), options, {
      decide: async (plan, changed) => {
        if (!json && changed) err("planned again:");
        if (!json) err(formatSwitchPlan(plan, choice));
        const unpaired = plannedWrites(plan, choice).length > 0 ? (plan.pairingErrors ?? []) : [];
        if (unpaired.length > 0 && !args.flags.has("allow-unpaired")) throw unpairedRefusal(plan, unpaired);
        if (!json && plannedWrites(plan, choice)[0] === "branch_summary" && plan.preparation.messages.length > 0)
          err(`summarizing the abandoned branch with ${model}…`);
        return choice;
      },
      onSessionChanged: (stage) => {
        if (!json) err(`${describeChange(stage)}; planning again.`);
      },
      onText: () => {
        if (!streamed && !json) err("receiving summary…");
        streamed = true;
      },
    });
    if (outcome.kind === "declined") return 0;
    const r = outcome.result;
    if (json) {
      out(
        JSON.stringify(
          {
            switched: outcome.kind === "switched",
            noop: outcome.kind === "noop",
            newLeafId: r.newLeafId,
            fileLeafId: r.fileLeafId,
            entries: r.entries,
            editorText: r.editorText ?? null,
            bytesBefore: r.bytesBefore,
            bytesAfter: r.bytesAfter,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    if (outcome.kind === "noop") out(`already at ${r.newLeafId}: nothing was written.`);
    else if (r.entries.length === 0)
      out(`the file already resumes at ${r.newLeafId ?? "the root"}: nothing was written.`);
    else {
      out(`switched: pi resumes at ${r.newLeafId ?? "the root"} (the session's last line is now ${r.fileLeafId})`);
      for (const e of r.entries)
        out(`  wrote ${e.type === "custom" ? "leaf marker" : e.type} ${e.id} (parent ${e.parentId ?? "null"})`);
      out(`file ${r.bytesBefore} → ${r.bytesAfter} bytes`);
    }
    if (r.editorText !== undefined)
      out(
        `\nthe target's text (pi would put it into the editor; send it again to continue from here):\n${r.editorText}`,
      );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = errorText(error);
    err(isCancellation(error) ? "cancelled: nothing was written." : nothingWritten(message));
    return 1;
  }
};

/** `switch --dry-run`: the plan (text or `--json`), the summary request's fit; nothing sent or written. */
async function dryRunSwitch(
  file: string,
  entryId: string,
  choice: SwitchChoice,
  options: SwitchPlanOptions,
  io: {
    maxOutputTokens: number;
    makeSummarizer: () => Summarizer;
    json: boolean;
    out: (s: string) => void;
    err: (s: string) => void;
  },
): Promise<number> {
  const { maxOutputTokens, makeSummarizer, json, out, err } = io;
  const plan = await planSwitch(file, entryId, options);
  const extra: string[] = [];
  const request = willSummarize(plan, choice) ? branchSummaryRequestOf(plan, choice, maxOutputTokens) : undefined;
  let inputTokens: number | null = null;
  let fitProblem: string | null = null;
  if (request) {
    try {
      const summarizer = makeSummarizer();
      const fitted = await fitSwitch(plan, choice, summarizer);
      inputTokens = fitted?.inputTokens ?? null;
      if (fitted)
        extra.push(
          `summarizer    ${summarizer.label}: 1 request, ≈${n(fitted.inputTokens)} input tokens${fitted.problem ? " — does not fit" : ""}`,
        );
      if (fitted?.problem) {
        fitProblem = fitted.problem.message;
        extra.push(`does not fit  ${fitted.problem.message}`);
      }
    } catch (error) {
      if (!(error instanceof SummarizerError)) throw error;
      err(`note: ${error.message}`);
    }
  } else if (willSummarize(plan, choice))
    extra.push(
      'summarizer    no call: nothing to summarize converts to a message (pi writes "No content to summarize")',
    );
  if (json) {
    out(
      JSON.stringify(
        {
          dryRun: true,
          targetId: plan.target.id,
          fileLeafId: plan.fileLeafId,
          oldLeafId: plan.oldLeafId,
          newLeafId: plan.newLeafId,
          noop: plan.noop,
          returnsText: plan.returnsText,
          editorText: plan.editorText ?? null,
          commonAncestorId: plan.collection.commonAncestorId,
          abandoned: plan.collection.entries.map((e) => e.id),
          messages: plan.preparation.messages.map((m) => m.record.id),
          tokens: plan.preparation.totalTokens,
          budget: plan.budget,
          // pi stops at the budget only when it is > 0: null = no limit (the whole branch is sent)
          budgetLimit: isBranchBudgetLimited(plan.budget) ? plan.budget : null,
          readFiles: plan.preparation.readFiles,
          modifiedFiles: plan.preparation.modifiedFiles,
          writes: plannedWrites(plan, choice),
          request: request ?? null,
          inputTokens,
          fitProblem,
          access: plan.access,
        },
        null,
        2,
      ),
    );
  } else out(`${formatSwitchPlan(plan, choice, extra)}\n\ndry run: nothing was sent or written.`);
  return 0;
}

/** The running pi moves its own leaf through its live bridge (pi's `/tree` navigation, its own summarizer). */
async function switchInPi(
  file: string,
  targetId: string,
  choice: SwitchChoice,
  routed: CliRoute,
  io: { json: boolean; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const { json, out, err } = io;
  const announcement = routed.announcement!;
  const who = piName(announcement);
  const connection = await connectRoute(announcement);
  try {
    if (!json && choice.summarize) err(`${who} is summarizing the branch it leaves…`);
    const r = await connection.request("navigate", {
      targetId,
      summarize: choice.summarize,
      ...(choice.customInstructions ? { customInstructions: choice.customInstructions } : {}),
      ...(choice.label ? { label: choice.label } : {}),
    });
    if (json) {
      out(
        JSON.stringify(
          {
            switched: !r.cancelled,
            by: announcement.pid,
            cancelled: r.cancelled,
            newLeafId: r.newLeafId,
            entries: r.entries,
          },
          null,
          2,
        ),
      );
      return r.cancelled ? 1 : 0;
    }
    if (r.cancelled) {
      err(
        `${who} did not switch (${r.aborted ? "the summary was cancelled" : "a pi extension cancelled it"}): nothing was written.`,
      );
      return 1;
    }
    out(
      `${who} switched through its live bridge: it resumes at ${r.newLeafId ?? "the root"}${r.entries.length ? ` (wrote ${r.entries.map((e) => `${e.type.replace(/_/g, " ")} ${e.id}`).join(", ")})` : ""}.`,
    );
    return 0;
  } finally {
    connection.close();
  }
}
