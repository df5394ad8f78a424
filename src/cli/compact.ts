/**
 * `pi-context compact`: the compaction flow of `Pi Context: Compact Session…` without VS Code (same
 * `core/flows/compact.ts`), for scripts and end-to-end tests.
 *
 *   pi-context compact <session.jsonl> [--keep-from ENTRY] [--instructions TEXT] [--dry-run] [--yes] [--json]
 *       [--base-url URL] [--model ID] [--summarizer-window N] [--max-output-tokens N] [--no-stream]
 *       [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never]
 *
 * `--keep-from ENTRY` ("Compact up to here"): pi's compaction with the cut at that entry — it and
 * everything after it kept verbatim, everything before it (since the latest compaction) summarized;
 * it must be one of pi's valid cut points (else the nearest ones are named, exit 1).
 * The API key comes from `PI_CONTEXT_API_KEY` or `OPENAI_API_KEY` (never a flag). Base URL and model
 * default to `PI_CONTEXT_BASE_URL` / `PI_CONTEXT_MODEL`, then OpenAI / `gpt-4o-mini`.
 * The preview (and `--dry-run`) needs no key; without one, compacting stops after the preview.
 * Exit codes: 0 compacted (or dry run / declined), 1 refused or failed (nothing written), 2 usage.
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import { clipLabel } from "../core/rules/sessionLabel";
import * as path from "node:path";
import * as readline from "node:readline";

import {
  fitPlan,
  InvalidCutPointError,
  NothingToCompactError,
  planCompaction,
  runCompactionFlow,
  type CompactionDraft,
  type CompactionPlan,
  type CompactionResult,
  type DraftReview,
  type PlanFit,
  type PlanOptions,
} from "../core/flows/compact";
import { ACTIONS } from "../core/access/route";
import { describeAccess } from "../core/access/words";
import { priceCompactionPlan } from "../core/flows/planPrice";
import { preparationLostItems, type LostReport } from "../core/rules/lostItems";
import { readModelsConfig } from "../core/rules/models";
import { priceLines } from "../viewModel/compactionPrice";
import { keepInstructions, lostSummary } from "../viewModel/lostItems";
import { describeChange } from "../core/flows/watch";
import { isCancellation, SummarizerError, type Summarizer } from "../core/flows/summarizer";
import { formatCount as n, formatTokenRange, nothingWritten, tokensText, withPeriod } from "../shared/format";
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
import { bridgeSupportsKeepFrom, KEEP_FROM_BRIDGE_VERSION } from "../bridge/protocol";
import { summarizerFromFlags, SUMMARIZER_FLAGS, type FlagSummarizer } from "./summarizer";

export const COMPACT_USAGE = `pi-context compact <session.jsonl> [--keep-from ENTRY] [--instructions TEXT] [--dry-run] [--yes] [--json]
  [--base-url URL] [--model ID] [--summarizer-window N] [--max-output-tokens N]
  [--no-stream] [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR]
  [--project-settings auto|always|never] [--pi PATH]
  API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY (environment only)`;

const KNOWN_FLAGS = new Set([
  "instructions",
  "keep-from",
  ...SUMMARIZER_FLAGS,
  "dry-run",
  "yes",
  "force",
  "guard-seconds",
  "agent-dir",
  "cwd",
  "project-settings",
  "json",
  "leaf",
  "context-window",
  "pi",
]);

/** The preview as plain text. */
export function formatCompactPreview(
  plan: CompactionPlan,
  fit: PlanFit | undefined,
  summarizer: Summarizer | undefined,
): string {
  const v = plan.preview;
  const p = plan.preparation;
  const row = (label: string, text: string) => `${label.padEnd(18)}${text}`;
  const lines = [
    ...(plan.session.name ? [row("session", clipLabel(plan.session.name))] : []),
    row("file", plan.file),
    row("leaf", p.leafId),
    row(
      "cut",
      plan.options.keepFrom !== undefined
        ? `at the chosen entry ${plan.options.keepFrom} (Compact up to here)`
        : `where keepRecentTokens (${n(p.settings.keepRecentTokens)}) puts it`,
    ),
    ...(v.estimateFailure
      ? [
          row("pi's /compact", withPeriod(estimateFailureText(v.estimateFailure))),
          row("tokens before", `≈${n(v.tokensBefore)} (pi-context's count; pi has none)`),
        ]
      : [row("tokens before", n(v.tokensBefore))]),
    row(
      "tokens after",
      `${formatTokenRange(plan.estimatedTokensAfterRange)} (kept ≈${n(v.keptTokens)} + checkpoint ≈${n(p.checkpointTokens)} + summary ${formatTokenRange(plan.estimatedSummaryRange)}, a guess)`,
    ),
    row(
      "summarized",
      `${n(v.summarizedEntryIds.length)} entries${v.turnPrefixEntryIds.length ? ` + ${n(v.turnPrefixEntryIds.length)} turn-prefix entries` : ""}, ≈${tokensText(v.summarizedTokens)}${p.previousSummary ? ` (updates the summary of compaction ${p.previousCompactionId})` : ""}`,
    ),
    row(
      "kept",
      `${n(v.keptEntryCount)} entries from ${v.firstKeptEntryId} (firstKeptEntryId), ≈${tokensText(v.keptTokens)}`,
    ),
    row("split turn", v.isSplitTurn ? `yes (the turn starts at ${v.turnStartEntryId})` : "no"),
    row("read files", v.readFiles.length ? v.readFiles.join(", ") : "(none)"),
    row("modified files", v.modifiedFiles.length ? v.modifiedFiles.join(", ") : "(none)"),
    row("instructions", plan.customInstructions ?? "(none)"),
  ];
  if (summarizer && fit) {
    lines.push(
      row(
        "summarizer",
        `${summarizer.label}: ${fit.history && fit.turnPrefix ? "2 requests" : "1 request"}, ≈${n(fit.inputTokens)} input tokens${summarizer.contextWindow ? ` (window ${n(summarizer.contextWindow)})` : ""}${fit.problem ? " — does not fit" : ""}`,
      ),
    );
    if (fit.problem) lines.push(row("does not fit", fit.problem.message));
  }
  for (const [i, line] of priceLines(
    priceCompactionPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir)),
  ).entries())
    lines.push(row(i === 0 ? "cost" : "", line));
  if (summarizer?.needsApiKey)
    lines.push(row("API key", "none: set PI_CONTEXT_API_KEY or OPENAI_API_KEY in the environment to compact"));
  if (plan.access.strength !== "none") lines.push(row("live", describeAccess(plan.access, ACTIONS.compact, [], "cli")));
  return lines.map(lineText).join("\n"); // one line each, whatever a session string holds
}

async function askYesNo(question: string): Promise<boolean> {
  if (!process.stdin.isTTY)
    throw new UsageError("Not a terminal: pass --yes to compact without asking (or --dry-run to only preview).");
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** One letter answer (`y`, `r`, `n`; empty = `n`). @throws {UsageError} when stdin is not a terminal. */
async function askChoice(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError("Not a terminal: pass --yes to write the summary without asking.");
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return answer.trim().toLowerCase().slice(0, 1) || "n";
  } finally {
    rl.close();
  }
}

/** One `pi-context compact` run: its flags, the route, the plan options and the output streams. */
interface CompactRun {
  /** The session file, absolute. */
  file: string;
  json: boolean;
  dryRun: boolean;
  yes: boolean;
  planOptions: PlanOptions;
  makeSummarizer: FlagSummarizer["make"];
  routed: CliRoute;
  out: (s: string) => void;
  err: (s: string) => void;
}

/** `pi-context compact`. */
export const compactCommand: CliCommand = async (argv, out, err) => {
  const run = await compactRun(argv, out, err);
  const seen = { shownProblem: false };
  try {
    if (run.dryRun) return await dryRunCompaction(run.file, run.planOptions, run.makeSummarizer, run);
    if (run.routed.route.kind === "bridge" && run.routed.announcement)
      return await compactInPi(run.file, run.planOptions, run.routed, run);
    if (run.routed.route.kind === "refuse") {
      if (run.json) out(JSON.stringify({ compacted: false, refused: "in-use", access: run.routed.access }, null, 2));
      err(run.routed.refusal!);
      return 1;
    }
    return await compactHere(run, seen);
  } catch (error) {
    return compactFailed(run, error, seen.shownProblem);
  }
};

/** The flags checked (@throws {UsageError}), then who has the session open decides the route, before any question. */
async function compactRun(
  argv: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<CompactRun> {
  const args = parseArgs(argv, new Set(["dry-run", "yes", "json", "no-stream", "force"]));
  const file = args.positional[0];
  const usage = `usage:\n${formatUsage(COMPACT_USAGE, 2)}\n  API key: PI_CONTEXT_API_KEY or OPENAI_API_KEY (environment only)`;
  if (!file || args.positional.length > 1) throw new UsageError(usage);
  checkFlags(args, KNOWN_FLAGS, COMPACT_USAGE);
  const env = process.env;
  const analyze = analyzeOptionsFrom(args, env);
  const pi = await userPiFrom(args, env);
  const guardSeconds = intFlag(args, "guard-seconds") ?? 30;
  const flagSummarizer = summarizerFromFlags(args, env);
  const { maxOutputTokens } = flagSummarizer;
  if (args.flags.has("leaf") || args.flags.has("context-window"))
    throw new UsageError(
      "compact works at the file's leaf with pi's settings: --leaf and --context-window are not supported (the summarizer's window is --summarizer-window).",
    );
  const json = args.flags.has("json");
  const dryRun = args.flags.has("dry-run");
  const absolute = path.resolve(file);
  const customInstructions = stringFlag(args, "instructions");
  const keepFrom = stringFlag(args, "keep-from")?.trim();
  if (keepFrom === "") throw new UsageError("--keep-from needs an entry id (see pi-context tree).");
  const routed = await cliRoute(absolute, keepFrom ? ACTIONS.compactUpToHere : ACTIONS.compact, {
    agentDir: analyze.agentDir,
    guardSeconds,
    force: args.flags.has("force"),
  });
  const planOptions = {
    agentDir: analyze.agentDir,
    projectSettings: analyze.projectSettings,
    ...(analyze.cwd ? { cwd: analyze.cwd } : {}),
    ...routed.flowOptions,
    surface: "cli" as const,
    pi,
    ...(customInstructions ? { customInstructions } : {}),
    ...(keepFrom ? { keepFrom } : {}),
  };
  return {
    file: absolute,
    json,
    dryRun,
    yes: args.flags.has("yes"),
    planOptions: { ...planOptions, maxOutputTokens },
    makeSummarizer: flagSummarizer.make,
    routed,
    out,
    err,
  };
}

/** Our summarizer compacts the file: preview and "Compact now?", the summary, the lost-items review, the append. */
async function compactHere(run: CompactRun, seen: { shownProblem: boolean }): Promise<number> {
  const { json, out, err } = run;
  const summarizer = run.makeSummarizer();
  let streamed = false;
  const review: { lost?: LostReport } = {};
  const outcome = await runCompactionFlow(run.file, summarizer, run.planOptions, {
    confirm: async (plan, fit, changed) => {
      if (!json) out(`${changed ? "New preview:\n" : ""}${formatCompactPreview(plan, fit, summarizer)}\n`);
      seen.shownProblem = fit.problem !== undefined;
      if (fit.problem) return false; // the flow refuses it (the preview said why)
      // the preview needs no key; sending does: stop here rather than after "Compact now?"
      if (summarizer.needsApiKey) throw summarizer.missingKeyError();
      if (run.yes) return true;
      return askYesNo("Compact now? [y/N] ");
    },
    reviewDraft: async (plan, draft) => reviewLostItems(run, plan, draft, review),
    onSessionChanged: (stage) => {
      if (!json) err(`${describeChange(stage)}; preparing again.`);
    },
    onPhase: (phase, i, count) => {
      if (!json)
        err(
          `Summarizing${count > 1 ? ` ${phase === "history" ? "history" : "split-turn prefix"} (${i}/${count})` : ""} with ${summarizer.label}…`,
        );
    },
    onText: () => {
      if (!streamed && !json) err("Receiving the summary…");
      streamed = true;
    },
  });
  if (outcome.kind === "declined") {
    out(
      outcome.stage === "review"
        ? "Discarded the summary: nothing was written."
        : "Declined: nothing was sent or written.",
    );
    return 0;
  }
  printCompacted(run, outcome.result, review.lost);
  return 0;
}

/** What the summary lost (kept in `review.lost`); with lost items and a terminal: write, re-run asking to keep them, or discard. */
async function reviewLostItems(
  run: CompactRun,
  plan: CompactionPlan,
  draft: CompactionDraft,
  review: { lost?: LostReport },
): Promise<DraftReview> {
  const lost = preparationLostItems(plan.preparation, draft.summary, plan.session, plan.session.cwd);
  review.lost = lost;
  if (run.json || run.yes || lost.items.length === 0) return { action: "write" };
  const { err } = run;
  err(`The summary ${lostSummary(lost.totals)}:`);
  for (const item of lost.items.slice(0, 20)) err(`  ${item.kind.padEnd(10)} ${item.text}  (entry ${item.entryId})`);
  if (lost.items.length > 20) err(`  … ${lost.items.length - 20} more`);
  const answer = await askChoice("Write it? [y]es / [r]e-run asking to keep them / [n]o: ");
  if (answer === "r")
    return {
      action: "retry",
      instructions: [plan.customInstructions, keepInstructions(lost)].filter(Boolean).join("\n\n"),
    };
  return answer === "y" ? { action: "write" } : { action: "discard" };
}

/** The written compaction: JSON, or the entry, tokens (never pi-context's count as pi's), bytes and losses. */
function printCompacted({ json, out }: CompactRun, r: CompactionResult, lost: LostReport | undefined): void {
  if (json) {
    out(
      JSON.stringify(
        {
          compacted: true,
          entry: r.entry,
          tokensBefore: r.tokensBefore,
          tokensAfter: r.tokensAfter,
          estimateFailureBefore: r.estimateFailureBefore ?? null,
          estimateFailureAfter: r.estimateFailureAfter ?? null,
          ...(r.readBackError ? { readBackError: r.readBackError } : {}),
          bytesBefore: r.bytesBefore,
          bytesAfter: r.bytesAfter,
          previousCompactionId: r.previousCompactionId ?? null,
          lost: lost ? { totals: lost.totals, items: lost.items } : null,
        },
        null,
        2,
      ),
    );
    return;
  }
  out(
    `Compacted: wrote compaction ${r.entry.id} after entry ${r.entry.parentId}; pi keeps the messages from ${r.entry.firstKeptEntryId} on.`,
  );
  const used = r.entry.usage ? `; the summarizer used ${n(r.entry.usage.totalTokens)} tokens` : "";
  if (r.estimateFailureBefore || r.estimateFailureAfter) {
    out(
      `Tokens: ${r.estimateFailureBefore ? "pi had no estimate" : n(r.tokensBefore)} → ${r.estimateFailureAfter ? "pi has no estimate" : r.tokensAfter === null ? "unknown" : `${n(r.tokensAfter)} (pi's estimate)`}${used}.`,
    );
    out(withPeriod(estimateFailureText((r.estimateFailureAfter ?? r.estimateFailureBefore)!)));
  } else
    out(
      `Tokens: ${n(r.tokensBefore)} → ${r.tokensAfter === null ? "unknown" : n(r.tokensAfter)} (pi's estimate)${used}.`,
    );
  if (r.readBackError)
    out(`Note: the compaction is written, but the file could not be read back: ${withPeriod(r.readBackError)}`);
  out(`File: ${n(r.bytesBefore)} → ${n(r.bytesAfter)} bytes.`);
  if (lost) out(`The summary ${lostSummary(lost.totals)}.`);
}

/** A failure as its message (JSON on stdout for --json when there was nothing to compact or no valid cut): exit 1. */
function compactFailed({ json, dryRun, out, err }: CompactRun, error: unknown, shownProblem: boolean): number {
  if (error instanceof UsageError) throw error;
  const message = errorText(error);
  if (error instanceof NothingToCompactError || error instanceof InvalidCutPointError) {
    if (json)
      out(
        JSON.stringify(
          {
            ...(dryRun ? { dryRun: true } : {}),
            compacted: false,
            ...(error instanceof NothingToCompactError
              ? { nothingToCompact: error.reason }
              : { invalidCut: error.code }),
            message,
          },
          null,
          2,
        ),
      );
    else err(withPeriod(message));
    return 1;
  }
  if (shownProblem && error instanceof SummarizerError && error.kind === "too-large")
    err("Not compacted: the summary request does not fit the summarizer (see above). Nothing was sent or written.");
  else err(isCancellation(error) ? "Cancelled: nothing was written." : nothingWritten(message));
  return 1;
}

/** `compact --dry-run`: the preview (text or `--json`), the summarizer's fit when one is configured; nothing sent or written. */
async function dryRunCompaction(
  file: string,
  planOptions: Parameters<typeof planCompaction>[1],
  makeSummarizer: () => Summarizer,
  io: { json: boolean; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const { json, out, err } = io;
  const plan = await planCompaction(file, planOptions);
  let summarizer: Summarizer | undefined;
  let fit: PlanFit | undefined;
  try {
    summarizer = makeSummarizer();
    fit = await fitPlan(plan, summarizer); // a request that does not fit comes back as fit.problem
  } catch (error) {
    if (!(error instanceof SummarizerError)) throw error;
    err(`Note: ${withPeriod(error.message)}`);
  }
  if (json)
    out(
      JSON.stringify(
        {
          dryRun: true,
          preview: plan.preview,
          estimatedTokensAfter: plan.estimatedTokensAfter,
          estimatedTokensAfterRange: plan.estimatedTokensAfterRange,
          access: plan.access,
          requests: { history: plan.historyRequest ?? null, turnPrefix: plan.turnPrefixRequest ?? null },
          inputTokens: fit?.inputTokens ?? null,
          estimate: priceCompactionPlan(plan, fit, summarizer, Date.now(), readModelsConfig(plan.options.agentDir)),
          fitProblem: fit?.problem?.message ?? null,
        },
        null,
        2,
      ),
    );
  else out(`${formatCompactPreview(plan, fit, summarizer)}\n\nDry run: nothing was sent or written.`);
  return 0;
}

/**
 * The running pi compacts the session itself through its live bridge (pi's `/compact`, its own
 * model and key): our preview of pi's plan, "Compact now in pi?", then pi writes the compaction.
 */
async function compactInPi(
  file: string,
  planOptions: Parameters<typeof planCompaction>[1],
  routed: CliRoute,
  io: { json: boolean; yes: boolean; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const { json, out, err } = io;
  const announcement = routed.announcement!;
  const who = piName(announcement);
  const keepFrom = planOptions.keepFrom;
  if (keepFrom !== undefined && !bridgeSupportsKeepFrom(announcement.bridgeVersion)) {
    err(
      `${who} runs the live bridge ${announcement.bridgeVersion}, which cannot keep from a chosen entry (${KEEP_FROM_BRIDGE_VERSION} can): install the current bridge (pi-context's "Pi Context: Install Live Bridge") and run /reload in pi. Nothing was sent or written.`,
    );
    return 1;
  }
  const plan = await planCompaction(file, { ...planOptions, guardSeconds: 0, procRoot: null, force: false });
  if (!json) {
    out(formatCompactPreview(plan, undefined, undefined));
    out(`by                ${who}, through its live bridge, with its own model and API key\n`);
  }
  if (!io.yes && !(await askYesNo("Compact now in pi? [y/N] "))) {
    out("Declined: nothing was sent or written.");
    return 0;
  }
  const connection = await connectRoute(announcement);
  try {
    if (!json) err(`${who} is summarizing…`);
    const r = await connection.request("compact", {
      ...(plan.customInstructions ? { customInstructions: plan.customInstructions } : {}),
      ...(keepFrom !== undefined ? { keepFrom } : {}),
    });
    if (json)
      out(
        JSON.stringify(
          {
            compacted: true,
            by: announcement.pid,
            entryId: r.entryId,
            firstKeptEntryId: r.firstKeptEntryId,
            tokensBefore: r.tokensBefore,
            tokensAfter: r.estimatedTokensAfter ?? null,
          },
          null,
          2,
        ),
      );
    else {
      out(
        `${who} compacted the session through its live bridge: compaction ${r.entryId ?? "?"}; pi keeps the messages from ${r.firstKeptEntryId} on.`,
      );
      out(
        `Tokens: ${n(r.tokensBefore)} → ${r.estimatedTokensAfter === undefined ? "unknown" : `≈${n(r.estimatedTokensAfter)}`} (pi's estimate).`,
      );
    }
    return 0;
  } finally {
    connection.close();
  }
}
