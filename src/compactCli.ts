/**
 * `pi-context compact`: the compaction flow of `Pi: Compact Session…` without VS Code (same
 * `core/compact.ts`), for scripts and end-to-end tests.
 *
 *   pi-context compact <session.jsonl> [--instructions TEXT] [--base-url URL] [--model ID]
 *       [--summarizer-window N] [--max-output-tokens N] [--no-stream] [--dry-run] [--yes]
 *       [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never] [--json]
 *
 * The API key comes from `PI_CONTEXT_API_KEY` or `OPENAI_API_KEY` (never a flag). Base URL and model
 * default to `PI_CONTEXT_BASE_URL` / `PI_CONTEXT_MODEL`, then OpenAI / `gpt-4o-mini`.
 * Exit codes: 0 compacted (or dry run / declined), 1 refused or failed (nothing written), 2 usage.
 */

import * as path from "node:path";
import * as readline from "node:readline";
import { analyzeOptionsFrom, parseArgs, UsageError, type CliCommand } from "./cli";
import { fitPlan, NothingToCompactError, planCompaction, runCompactionFlow, type CompactionPlan, type PlanFit } from "./core/compact";
import { describeLive } from "./core/live";
import { isCancellation, SummarizerError, type Summarizer } from "./core/summarizer";
import { OpenAiSummarizer } from "./summarizers/openai";

export const COMPACT_USAGE = `pi-context compact <session.jsonl> [--instructions TEXT] [--base-url URL] [--model ID]
                   [--summarizer-window N] [--max-output-tokens N] [--no-stream] [--dry-run] [--yes]
                   [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never] [--json]
  API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY (environment only)`;

const n = (v: number) => v.toLocaleString("en-US");

const KNOWN_FLAGS = new Set(["instructions", "base-url", "model", "summarizer-window", "max-output-tokens", "no-stream", "dry-run", "yes", "guard-seconds", "agent-dir", "cwd", "project-settings", "json", "leaf", "context-window"]);

/** The preview as plain text. */
export function formatCompactPreview(plan: CompactionPlan, fit: PlanFit | undefined, summarizer: Summarizer | undefined): string {
  const v = plan.preview;
  const p = plan.preparation;
  const lines = [
    `session           ${plan.session.name ? `${plan.session.name} — ` : ""}${plan.file}`,
    `leaf              ${p.leafId}`,
    `tokens before     ${n(v.tokensBefore)}`,
    `tokens after      ≈${n(plan.estimatedTokensAfter)} (kept ≈${n(v.keptTokens)} + checkpoint ≈${n(p.checkpointTokens)} + summary ≈${n(plan.estimatedSummaryTokens)}, a guess)`,
    `summarised        ${v.summarizedEntryIds.length} entries${v.turnPrefixEntryIds.length ? ` + ${v.turnPrefixEntryIds.length} turn-prefix entries` : ""}, ≈${n(v.summarizedTokens)} tokens${p.previousSummary ? ` (updates the summary of ${p.previousCompactionId})` : ""}`,
    `kept              ${v.keptEntryCount} entries from firstKeptEntryId ${v.firstKeptEntryId}, ≈${n(v.keptTokens)} tokens`,
    `split turn        ${v.isSplitTurn ? `yes (turn starts at ${v.turnStartEntryId})` : "no"}`,
    `read files        ${v.readFiles.length ? v.readFiles.join(", ") : "(none)"}`,
    `modified files    ${v.modifiedFiles.length ? v.modifiedFiles.join(", ") : "(none)"}`,
    `instructions      ${plan.customInstructions ?? "(none)"}`,
  ];
  if (summarizer && fit) {
    lines.push(`summariser        ${summarizer.label}: ${fit.history && fit.turnPrefix ? "2 requests" : "1 request"}, ≈${n(fit.inputTokens)} input tokens${summarizer.contextWindow ? ` (window ${n(summarizer.contextWindow)})` : ""}`);
  }
  if (plan.live.live) lines.push(`live              ${describeLive(plan.live)}`);
  return lines.join("\n");
}

async function askYesNo(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new UsageError("not a terminal: pass --yes to compact without asking (or --dry-run to only preview)");
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

function intFlag(value: string | true | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const v = Number(value);
  if (typeof value !== "string" || !Number.isFinite(v) || v < 0) throw new UsageError(`--${name} must be a non-negative number`);
  return Math.floor(v);
}

/** `pi-context compact`. */
export const compactCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["dry-run", "yes", "json", "no-stream"]));
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError(`usage: ${COMPACT_USAGE}`);
  for (const name of args.flags.keys()) {
    if (name === "api-key") throw new UsageError("there is no --api-key flag: put the key in PI_CONTEXT_API_KEY or OPENAI_API_KEY (flags end up in shell history and process lists)");
    if (!KNOWN_FLAGS.has(name)) throw new UsageError(`unknown flag --${name}\nusage: ${COMPACT_USAGE}`);
  }
  const env = process.env;
  const analyze = analyzeOptionsFrom(args, env);
  const str = (name: string) => {
    const v = args.flags.get(name);
    return typeof v === "string" ? v : undefined;
  };
  const guardSeconds = intFlag(args.flags.get("guard-seconds"), "guard-seconds") ?? 30;
  const maxOutputTokens = intFlag(args.flags.get("max-output-tokens"), "max-output-tokens") ?? 8192;
  const contextWindow = intFlag(args.flags.get("summarizer-window"), "summarizer-window");
  if (args.flags.has("leaf") || args.flags.has("context-window")) throw new UsageError("compact works at the file's leaf with pi's settings: --leaf and --context-window are not supported (the summariser's window is --summarizer-window)");
  const json = args.flags.has("json");
  const dryRun = args.flags.has("dry-run");
  const absolute = path.resolve(file);
  const customInstructions = str("instructions");
  const planOptions = {
    agentDir: analyze.agentDir,
    projectSettings: analyze.projectSettings,
    ...(analyze.cwd ? { cwd: analyze.cwd } : {}),
    guardSeconds,
    ...(customInstructions ? { customInstructions } : {}),
  };
  const apiKey = env.PI_CONTEXT_API_KEY || env.OPENAI_API_KEY || undefined;
  const model = str("model") ?? env.PI_CONTEXT_MODEL ?? "gpt-4o-mini";
  const baseURL = str("base-url") ?? env.PI_CONTEXT_BASE_URL;
  const makeSummarizer = () =>
    new OpenAiSummarizer({
      ...(baseURL ? { baseURL } : {}),
      ...(apiKey ? { apiKey } : {}),
      model,
      ...(contextWindow ? { contextWindow } : { contextWindow: 128000 }),
      maxOutputTokens,
      stream: !args.flags.has("no-stream"),
    });

  try {
    if (dryRun) {
      const plan = await planCompaction(absolute, { ...planOptions, maxOutputTokens });
      let summarizer: Summarizer | undefined;
      let fit: PlanFit | undefined;
      try {
        summarizer = makeSummarizer();
        fit = await fitPlan(plan, summarizer);
      } catch (error) {
        if (!(error instanceof SummarizerError)) throw error;
        err(`note: ${error.message}`);
      }
      if (json) out(JSON.stringify({ dryRun: true, preview: plan.preview, estimatedTokensAfter: plan.estimatedTokensAfter, live: plan.live, requests: { history: plan.historyRequest ?? null, turnPrefix: plan.turnPrefixRequest ?? null }, inputTokens: fit?.inputTokens ?? null }, null, 2));
      else out(`${formatCompactPreview(plan, fit, summarizer)}\n\ndry run: nothing was sent or written.`);
      return 0;
    }
    const summarizer = makeSummarizer();
    let streamed = false;
    const outcome = await runCompactionFlow(absolute, summarizer, { ...planOptions, maxOutputTokens }, {
      confirm: async (plan, fit, changed) => {
        if (!json) out(`${changed ? "the session changed since the preview; new preview:\n" : ""}${formatCompactPreview(plan, fit, summarizer)}\n`);
        if (args.flags.has("yes")) return true;
        return askYesNo("Compact now? [y/N] ");
      },
      onPhase: (phase, i, count) => {
        if (!json) err(`summarising${count > 1 ? ` ${phase === "history" ? "history" : "split-turn prefix"} (${i}/${count})` : ""} with ${summarizer.label}…`);
      },
      onText: () => {
        if (!streamed && !json) err("receiving summary…");
        streamed = true;
      },
    });
    if (outcome.kind === "declined") {
      out("declined: nothing was sent or written.");
      return 0;
    }
    const r = outcome.result;
    if (json) out(JSON.stringify({ compacted: true, entry: r.entry, tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, previousCompactionId: r.previousCompactionId ?? null }, null, 2));
    else {
      out(`compacted: wrote compaction ${r.entry.id} (parent ${r.entry.parentId}, firstKeptEntryId ${r.entry.firstKeptEntryId})`);
      out(`tokens ${n(r.tokensBefore)} → ${n(r.tokensAfter)} (pi's estimate)${r.entry.usage ? `; summariser usage ${n(r.entry.usage.totalTokens)} tokens` : ""}`);
      out(`file ${r.bytesBefore} → ${r.bytesAfter} bytes`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = (error as Error).message;
    if (error instanceof NothingToCompactError) {
      err(message);
      return 1;
    }
    err(isCancellation(error) ? "cancelled: nothing was written." : `${message}${/[Nn]othing was (written|sent)/.test(message) ? "" : " Nothing was written."}`);
    return 1;
  }
};
