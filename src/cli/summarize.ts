/**
 * `pi-context summarize`: "Summarize these messages" without VS Code (same `core/flows/spanSummary.ts`).
 *
 *   pi-context summarize <session.jsonl> <from> <to> [--instructions TEXT] [--dry-run] [--yes] [--json]
 *       [--base-url URL] [--model ID] [--summarizer-window N] [--max-output-tokens N] [--no-stream]
 *       [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings …] [--pi PATH]
 *
 * The span from one entry to the other (either order, widened to whole tool call / result groups)
 * is replaced by one summary: the first message carries the note, the others are omitted, all in one
 * append of context edits (`pi-context restore` with the span's entries brings it back). The
 * summary is written by the summarizer of the flags (pi has no command that summarizes part of
 * its context); when a pi has the session open with the live bridge, that pi appends the edits.
 * Exit codes (as `compact`): 0 written (or dry run / declined), 1 refused or failed, 2 usage.
 */

import * as path from "node:path";
import * as readline from "node:readline";
import { ACTIONS } from "../core/access/route";
import { describeAccess } from "../core/access/words";
import { priceSpanPlan } from "../core/flows/planPrice";
import {
  fitSpanPlan,
  planSpanSummary,
  runSpanSummaryFlow,
  SpanRefusedError,
  type SpanFit,
  type SpanSummaryPlan,
} from "../core/flows/spanSummary";
import { completeSummary, isCancellation, SummarizerError, type Summarizer } from "../core/flows/summarizer";
import { readModelsConfig } from "../core/rules/models";
import { spanDrafts, spanNote } from "../core/rules/spanSummary";
import { describeChange } from "../core/flows/watch";
import { formatCount as n, nothingWritten, plural, withPeriod } from "../shared/format";
import { lineText } from "../shared/untrusted";
import { buildSpanPreview, spanPreviewLines } from "../viewModel/spanPreview";
import { runningTurnIds } from "../viewModel/trimList";
import {
  analyzeOptionsFrom,
  checkFlags,
  errorText,
  formatUsage,
  intFlag,
  parseArgs,
  stringFlag,
  UsageError,
  userPiFrom,
  type CliCommand,
} from "./args";
import { cliRoute, connectRoute, piName, type CliRoute } from "./route";
import { summarizerFromFlags, SUMMARIZER_FLAGS } from "./summarizer";
import type { OpenAiSummarizer } from "../summarizers/openai";

export const SUMMARIZE_USAGE = `pi-context summarize <session.jsonl> <from> <to> [--instructions TEXT] [--dry-run] [--yes] [--json]
  [--base-url URL] [--model ID] [--summarizer-window N] [--max-output-tokens N]
  [--no-stream] [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR]
  [--project-settings auto|always|never] [--pi PATH]
  API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY (environment only)`;

const KNOWN_FLAGS = new Set([
  "instructions",
  ...SUMMARIZER_FLAGS,
  "dry-run",
  "yes",
  "force",
  "guard-seconds",
  "agent-dir",
  "cwd",
  "project-settings",
  "json",
  "pi",
]);

/** The preview as plain text. */
function formatPreview(plan: SpanSummaryPlan, fit: SpanFit | undefined, summarizer: Summarizer | undefined): string {
  const price = priceSpanPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir));
  const preview = buildSpanPreview(plan, plan.analysis.inspect, price);
  const lines = [
    ...(plan.session.name ? [`session  ${plan.session.name}`] : []),
    `file     ${plan.file}`,
    `leaf     ${plan.span.leafId ?? "(none)"}`,
    `note     ${preview.header}`,
    ...spanPreviewLines(preview),
  ];
  if (plan.customInstructions) lines.push(`Focus: ${plan.customInstructions}`);
  if (summarizer && fit)
    lines.push(
      `Summarizer: ${summarizer.label}, ≈${n(fit.inputTokens)} input tokens${summarizer.contextWindow ? ` (window ${n(summarizer.contextWindow)})` : ""}${fit.problem ? " — does not fit" : ""}.`,
    );
  if (fit?.problem) lines.push(fit.problem.message);
  if (summarizer?.needsApiKey)
    lines.push("API key: none — set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment to summarize.");
  if (plan.access.strength !== "none") lines.push(`live: ${describeAccess(plan.access, ACTIONS.summarize, [], "cli")}`);
  return lines.map(lineText).join("\n");
}

function previewJson(plan: SpanSummaryPlan, fit: SpanFit | undefined, summarizer: Summarizer | undefined): object {
  const price = priceSpanPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir));
  return {
    preview: buildSpanPreview(plan, plan.analysis.inspect, price),
    messages: plan.span.messages.map((e) => e.record.id),
    drafts: plan.edits.drafts.map((d) => ({ targetId: d.targetId, effect: d.replacement === null ? "omit" : "note" })),
    request: plan.request,
    inputTokens: fit?.inputTokens ?? null,
    fitProblem: fit?.problem?.message ?? null,
    access: plan.access,
  };
}

async function askYesNo(question: string): Promise<boolean> {
  if (!process.stdin.isTTY)
    throw new UsageError("Not a terminal: pass --yes to summarize without asking (or --dry-run to only preview).");
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** `pi-context summarize`. */
export const summarizeCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["dry-run", "yes", "json", "no-stream", "force"]));
  const [file, fromId, toId, ...rest] = args.positional;
  if (!file || !fromId || !toId || rest.length > 0) throw new UsageError(`usage:\n${formatUsage(SUMMARIZE_USAGE, 2)}`);
  checkFlags(args, KNOWN_FLAGS, SUMMARIZE_USAGE);
  const env = process.env;
  const analyze = analyzeOptionsFrom(args, env);
  const pi = await userPiFrom(args, env);
  const flagSummarizer = summarizerFromFlags(args, env);
  const json = args.flags.has("json");
  const absolute = path.resolve(file);
  const customInstructions = stringFlag(args, "instructions");
  const routed = await cliRoute(absolute, ACTIONS.summarize, {
    agentDir: analyze.agentDir,
    guardSeconds: intFlag(args, "guard-seconds") ?? 30,
    force: args.flags.has("force"),
  });
  const planOptions = {
    agentDir: analyze.agentDir,
    projectSettings: analyze.projectSettings,
    ...(analyze.cwd ? { cwd: analyze.cwd } : {}),
    ...routed.flowOptions,
    surface: "cli" as const,
    pi,
    maxOutputTokens: flagSummarizer.maxOutputTokens,
    ...(customInstructions ? { customInstructions } : {}),
  };
  try {
    if (routed.route.kind === "bridge" && routed.announcement)
      return await summarizeInPi(absolute, fromId, toId, planOptions, routed, {
        summarizer: flagSummarizer.make,
        json,
        dryRun: args.flags.has("dry-run"),
        yes: args.flags.has("yes"),
        out,
        err,
      });
    if (args.flags.has("dry-run")) {
      const plan = await planSpanSummary(absolute, fromId, toId, planOptions);
      let summarizer: Summarizer | undefined;
      let fit: SpanFit | undefined;
      try {
        summarizer = flagSummarizer.make();
        fit = await fitSpanPlan(plan, summarizer);
      } catch (error) {
        if (!(error instanceof SummarizerError)) throw error;
        err(`Note: ${withPeriod(error.message)}`);
      }
      if (json) out(JSON.stringify({ dryRun: true, ...previewJson(plan, fit, summarizer) }, null, 2));
      else out(`${formatPreview(plan, fit, summarizer)}\n\nDry run: nothing was sent or written.`);
      return 0;
    }
    if (routed.route.kind === "refuse") {
      if (json) out(JSON.stringify({ summarized: false, refused: "in-use", access: routed.access }, null, 2));
      err(routed.refusal!);
      return 1;
    }
    const summarizer = flagSummarizer.make();
    const outcome = await runSpanSummaryFlow(absolute, fromId, toId, summarizer, planOptions, {
      confirm: async (plan, fit, changed) => {
        if (!json) out(`${changed ? "New preview:\n" : ""}${formatPreview(plan, fit, summarizer)}\n`);
        if (fit.problem) return false;
        if (summarizer.needsApiKey) throw summarizer.missingKeyError();
        return args.flags.has("yes") || askYesNo("Summarize these messages now? [y/N] ");
      },
      onSessionChanged: (stage) => {
        if (!json) err(`${describeChange(stage)}; preparing again.`);
      },
    });
    if (outcome.kind === "declined") {
      out("Declined: nothing was sent or written.");
      return 0;
    }
    const r = outcome.result;
    if (json)
      out(
        JSON.stringify(
          {
            summarized: true,
            entries: r.entries,
            note: r.note,
            leafId: r.leafId,
            tokensBefore: outcome.plan.edits.pureTokensBefore,
            tokensAfter: r.tokensAfter,
            bytesBefore: r.bytesBefore,
            bytesAfter: r.bytesAfter,
            usage: outcome.usage ?? null,
            ...(r.readBackError ? { readBackError: r.readBackError } : {}),
          },
          null,
          2,
        ),
      );
    else {
      out(
        `Summarized: wrote ${plural(r.entries.length, "context edit")} after entry ${outcome.plan.span.leafId ?? "(none)"}; ${outcome.plan.span.targetId} carries the summary of ${plural(outcome.plan.span.messages.length, "message")} (${outcome.plan.span.fromId}…${outcome.plan.span.toId}).`,
      );
      out(
        `Tokens: ${n(outcome.plan.edits.pureTokensBefore)} → ${r.tokensAfter === null ? "unknown" : n(r.tokensAfter)} (pi's estimate).`,
      );
      out(`File: ${n(r.bytesBefore)} → ${n(r.bytesAfter)} bytes.`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof SpanRefusedError) {
      err(error.message);
      return 1;
    }
    err(isCancellation(error) ? "Cancelled: nothing was written." : nothingWritten(errorText(error)));
    return 1;
  }
};

/**
 * The running pi appends the edits (its live bridge): planned at pi's own leaf, previewed, the
 * summary written by the summarizer of the flags, then the drafts sent to pi.
 */
async function summarizeInPi(
  file: string,
  fromId: string,
  toId: string,
  planOptions: Parameters<typeof planSpanSummary>[3],
  routed: CliRoute,
  io: {
    summarizer: () => OpenAiSummarizer;
    json: boolean;
    dryRun: boolean;
    yes: boolean;
    out: (s: string) => void;
    err: (s: string) => void;
  },
): Promise<number> {
  const { json, out, err } = io;
  const announcement = routed.announcement!;
  const who = piName(announcement);
  const connection = await connectRoute(announcement);
  try {
    const leafId = connection.state.leafId ?? null;
    const plan = await planSpanSummary(file, fromId, toId, {
      ...planOptions,
      guardSeconds: 0,
      procRoot: null,
      force: false,
      leafId,
    });
    if (connection.state.activity !== "idle") {
      const running = runningTurnIds(plan.span.projection);
      const inRun = plan.span.messages.map((e) => e.record.id).filter((id) => running.has(id));
      if (inRun.length > 0) {
        err(
          `${who} is answering the latest message now; the span reaches into that run (${inRun.join(", ")}). Summarize it once pi has finished. Nothing was written.`,
        );
        return 1;
      }
    }
    const summarizer = io.summarizer();
    const fit = await fitSpanPlan(plan, summarizer);
    if (json && io.dryRun)
      out(JSON.stringify({ dryRun: true, by: announcement.pid, ...previewJson(plan, fit, summarizer) }, null, 2));
    else if (!json)
      out(`${formatPreview(plan, fit, summarizer)}\nby       ${who} appends the edits through its live bridge\n`);
    if (io.dryRun) return 0;
    if (fit.problem) {
      err("Not summarized: the summary request does not fit the summarizer (see above). Nothing was sent or written.");
      return 1;
    }
    if (summarizer.needsApiKey) throw summarizer.missingKeyError();
    if (!io.yes && !(await askYesNo("Summarize these messages now (pi appends the edits)? [y/N] "))) {
      out("Declined: nothing was sent or written.");
      return 0;
    }
    const result = await completeSummary(summarizer, fit.request.request, "Scoped summary");
    const drafts = spanDrafts(plan.span, spanNote(plan.span, result.text), plan.session);
    const r = await connection.request("contextEdit", { drafts, leafId });
    if (json)
      out(
        JSON.stringify(
          {
            summarized: r.status === "applied",
            status: r.status,
            by: announcement.pid,
            entries: r.entries,
            leafId: r.leafId,
          },
          null,
          2,
        ),
      );
    else
      out(
        r.status === "applied"
          ? `${who} appended ${plural(r.entries.length, "context edit")} through its live bridge: ${plan.span.targetId} carries the summary of ${plural(plan.span.messages.length, "message")}.`
          : `${who} is answering: it appends ${plural(drafts.length, "context edit")} at its next turn boundary (batch ${r.batchId}).`,
      );
    return 0;
  } finally {
    connection.close();
  }
}
