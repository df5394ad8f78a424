/**
 * `pi-context trim` and `pi-context restore`: context surgery without VS Code, on the same planner
 * and write flow as "Pi Context: Trim Context…" (`core/flows/contextEdit.ts`, `viewModel/trimActions.ts`).
 *
 *   pi-context trim <session.jsonl> <entryId>... [--remove | --note TEXT] [--dry-run] [--json]
 *       [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never]
 *   pi-context restore <session.jsonl> <entryId>... [--dry-run] [--json] [--guard-seconds N] …
 *
 * Default: a tool result is replaced by a short note (tool, what it worked on, size), anything else
 * is removed; `--remove` asks for removal (a tool result whose call is sent still keeps a note: a
 * result is never orphaned), `--note TEXT` replaces every target's content with TEXT (an assistant
 * keeps its tool calls). `restore` appends edits that bring the original content back. Removing an
 * assistant message removes its tool results with it (listed). Every edit goes in one append, only
 * if the file is unchanged since it was read, and not while pi looks live on the session.
 * Exit codes (as `compact`): 0 written (or dry run / nothing to change), 1 refused or failed
 * (nothing written; also when any target is refused), 2 usage.
 */

import { estimateFailureText } from "../core/rules/estimateFailure";
import { clipLabel } from "../core/rules/sessionLabel";
import * as path from "node:path";
import { planContextEdits, runContextEditFlow, type ContextEditPlan } from "../core/flows/contextEdit";
import { ACTIONS } from "../core/access/route";
import { describeAccess } from "../core/access/words";
import { analyzeLoaded } from "../core/rules/analyze";
import type { ContextEditAction } from "../core/rules/editPlan";
import { formatCount as n, nothingWritten, plural, withPeriod } from "../shared/format";
import { lineText } from "../shared/untrusted";
import type { TrimChoice, TrimPreviewModel } from "../shared/trim";
import { trimActions } from "../viewModel/trimActions";
import { effectText, sessionTrimPreview, trimPreviewLines } from "../viewModel/trimPreview";
import {
  errorText,
  analyzeOptionsFrom,
  checkFlags,
  formatUsage,
  intFlag,
  parseArgs,
  stringFlag,
  UsageError,
  userPiFrom,
  type CliCommand,
  type ParsedArgs,
} from "./args";
import type { UserPi } from "../core/pi/userPi";
import { cliRoute, connectRoute, piName, type CliRoute } from "./route";

export const TRIM_USAGE = `pi-context trim <session.jsonl> <entryId>... [--remove | --note TEXT] [--dry-run] [--json]
  [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never] [--pi PATH]`;
export const RESTORE_USAGE = `pi-context restore <session.jsonl> <entryId>... [--dry-run] [--json]
  [--force] [--guard-seconds N] [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never] [--pi PATH]`;

const COMMON_FLAGS = ["dry-run", "json", "force", "guard-seconds", "agent-dir", "cwd", "project-settings", "pi"];

/**
 * The preview of a plan (what `--dry-run` prints and what is printed before writing), with the
 * window, threshold and prices of the user's pi (`pi`: `--pi`, else found as `inspect` finds it).
 */
export function trimPreviewOf(plan: ContextEditPlan, args: ParsedArgs, pi?: UserPi): TrimPreviewModel {
  const analyze = analyzeOptionsFrom(args);
  const analysis = analyzeLoaded(plan.session, {
    agentDir: analyze.agentDir,
    projectSettings: analyze.projectSettings,
    ...(analyze.cwd ? { cwd: analyze.cwd } : {}),
    ...(pi ? { pi } : {}),
  });
  return sessionTrimPreview(plan.session, plan.preparation, analysis.inspect);
}

/** The preview as text: each edit, then the facts. */
export function formatTrimPreview(plan: ContextEditPlan, preview: TrimPreviewModel): string {
  const lines = [
    `session  ${plan.session.name ? `${clipLabel(plan.session.name)} — ` : ""}${plan.file}`,
    `leaf     ${plan.preparation.leafId ?? "(none)"}`,
  ];
  for (const e of preview.edits) {
    lines.push(
      `  ${e.targetId}  ${effectText(e.effect)}${e.cascade ? ` (${e.cause})` : ""}: ${e.text} — ${n(e.tokensBefore)} → ${n(e.tokensAfter)} tokens`,
    );
    if (e.note) lines.push(`      note: ${e.note}`);
  }
  lines.push("", ...trimPreviewLines(preview));
  if (plan.access.strength !== "none" && preview.edits.length)
    lines.push(`live: ${describeAccess(plan.access, ACTIONS.contextEdit, [], "cli")}`);
  return lines.map(lineText).join("\n"); // one line each, whatever a session string holds
}

/** JSON of a preview: the drafts it would append and the numbers. */
function previewJson(plan: ContextEditPlan, preview: TrimPreviewModel, dryRun: boolean): unknown {
  return {
    dryRun,
    file: plan.file,
    leafId: plan.preparation.leafId,
    drafts: plan.preparation.drafts,
    edits: preview.edits,
    refused: preview.refused,
    unchanged: preview.unchanged,
    tokensBefore: preview.tokensNow,
    pureTokensBefore: preview.pureTokensNow,
    baselineTokens: preview.baselineTokens,
    tokensAfter: preview.tokensAfter,
    tokensSaved: preview.tokensSaved,
    estimateFailureBefore: plan.preparation.estimateFailureBefore ?? null,
    estimateFailureAfter: plan.preparation.estimateFailureAfter ?? null,
    percentAfter: preview.percentAfter,
    untilCompactionAfter: preview.untilCompactionAfter,
    cache: preview.cache ?? null,
    cost: preview.cost,
    bytes: preview.bytes,
    access: plan.access,
  };
}

/** A plan with refusals is not written (nothing is). */
class RefusedError extends Error {}

async function run(
  name: "trim" | "restore",
  argv: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  const usageText = name === "trim" ? TRIM_USAGE : RESTORE_USAGE;
  const args = parseArgs(argv, new Set(["dry-run", "json", "remove", "force"]));
  const [file, ...ids] = args.positional;
  if (!file || ids.length === 0)
    throw new UsageError(
      `${!file ? "Give the session file and" : "Give"} the id of at least one entry to ${name} (pi-context tree ${file ? JSON.stringify(file) : "FILE"} lists them).\nusage:\n${formatUsage(usageText, 2)}`,
    );
  checkFlags(args, new Set(name === "trim" ? [...COMMON_FLAGS, "remove", "note"] : COMMON_FLAGS), usageText);
  const note = stringFlag(args, "note");
  if (args.flags.has("note") && (note === undefined || note.trim() === ""))
    throw new UsageError("--note needs a text.");
  if (note !== undefined && args.flags.has("remove")) throw new UsageError("Give --remove or --note, not both.");
  const { agentDir } = analyzeOptionsFrom(args); // usage errors of the shared flags first
  const pi = await userPiFrom(args);
  const choice: TrimChoice =
    name === "restore" ? "restore" : note !== undefined ? "note" : args.flags.has("remove") ? "remove" : "default";
  const json = args.flags.has("json");
  const absolute = path.resolve(file);
  const guardSeconds = intFlag(args, "guard-seconds") ?? 30;
  // the CLI's choices need no body: the planner reads what it needs from the fresh read
  const actions: ContextEditAction[] = trimActions(
    undefined,
    ids.map((entryId) => ({ entryId, choice, ...(note !== undefined ? { note } : {}) })),
  );

  try {
    // who has the session open decides the route, before anything is planned or asked
    const routed = await cliRoute(absolute, ACTIONS.contextEdit, {
      agentDir,
      guardSeconds,
      force: args.flags.has("force"),
    });
    const options = { ...routed.flowOptions, surface: "cli" as const };
    if (routed.route.kind === "bridge" && routed.announcement)
      return await trimInPi(name, absolute, actions, routed, { args, pi, out, err });
    if (args.flags.has("dry-run")) {
      const plan = await planContextEdits(absolute, actions, options);
      const preview = trimPreviewOf(plan, args, pi);
      if (json) out(JSON.stringify(previewJson(plan, preview, true), null, 2));
      else out(`${formatTrimPreview(plan, preview)}\n\nDry run: nothing was written.`);
      return preview.refused.length > 0 ? 1 : 0;
    }
    if (routed.route.kind === "refuse") {
      if (json) out(JSON.stringify({ written: false, refused: "in-use", access: routed.access }, null, 2));
      err(routed.refusal!);
      return 1;
    }
    let shown: TrimPreviewModel | undefined;
    const outcome = await runContextEditFlow(absolute, actions, options, {
      confirm: async (plan, changed) => {
        shown = trimPreviewOf(plan, args, pi);
        if (!json)
          err(
            `${changed ? "The session changed since it was read; planned again.\n" : ""}${formatTrimPreview(plan, shown)}`,
          );
        if (shown.refused.length > 0) throw new RefusedError(refusalText(shown));
        return true;
      },
    });
    const preview = shown ?? trimPreviewOf(outcome.plan, args);
    if (outcome.kind === "nothing") {
      if (preview.refused.length > 0) {
        if (json)
          out(JSON.stringify({ ...(previewJson(outcome.plan, preview, false) as object), written: false }, null, 2));
        else out(formatTrimPreview(outcome.plan, preview));
        err(refusalText(preview));
        return 1;
      }
      if (json)
        out(JSON.stringify({ ...(previewJson(outcome.plan, preview, false) as object), written: false }, null, 2));
      else
        out(
          `Nothing to change: ${plural(preview.unchanged.length, "entry", "entries")} already ${preview.unchanged.length === 1 ? "shows" : "show"} what was asked. Nothing was written.`,
        );
      return 0;
    }
    if (outcome.kind === "declined") return 0;
    const r = outcome.result;
    if (json) {
      out(
        JSON.stringify(
          {
            written: true,
            entries: r.entries,
            leafId: r.leafId,
            tokensBefore: preview.tokensNow,
            pureTokensBefore: preview.pureTokensNow,
            tokensAfter: r.tokensAfter,
            estimateFailureBefore: outcome.plan.preparation.estimateFailureBefore ?? null,
            estimateFailureAfter: r.estimateFailureAfter ?? null,
            bytesBefore: r.bytesBefore,
            bytesAfter: r.bytesAfter,
            pairingErrorsAfter: r.pairingAfter?.errors ?? null,
            ...(r.readBackError ? { readBackError: r.readBackError } : {}),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    out(
      `${name === "trim" ? "Trimmed" : "Restored"}: wrote ${plural(r.entries.length, "context edit")} after entry ${outcome.plan.preparation.leafId ?? "(none)"} (${r.entries.map((e) => `${e.id} → ${e.targetId}`).join(", ")}).`,
    );
    const before = outcome.plan.preparation.estimateFailureBefore;
    const tokensBefore = before ? "pi had no estimate" : n(preview.baselineTokens);
    out(
      r.tokensAfter === null
        ? `Tokens: ${tokensBefore} → ≈${n(preview.tokensAfter)} planned; the file could not be read back (${r.readBackError ?? "unknown error"}).`
        : r.estimateFailureAfter
          ? `Tokens: ${tokensBefore} → pi has no estimate: ${withPeriod(estimateFailureText(r.estimateFailureAfter))}`
          : before
            ? `Tokens: pi had no estimate (${estimateFailureText(before)}) → ${n(r.tokensAfter)} (pi's estimate).`
            : `Tokens: ${tokensBefore} → ${n(r.tokensAfter)} (pi's estimate).`,
    );
    if (preview.cache) out(`The next request sends ≈${n(preview.cache.resentTokens)} tokens without the prompt cache.`);
    out(`File: ${n(r.bytesBefore)} → ${n(r.bytesAfter)} bytes.`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof RefusedError) {
      err(error.message);
      return 1;
    }
    err(nothingWritten(errorText(error)));
    return 1;
  }
}

/**
 * The running pi appends the edits itself (its live bridge): planned at pi's own leaf, previewed,
 * then sent; pi applies them at once while idle, or at its next turn boundary while it answers.
 */
async function trimInPi(
  name: "trim" | "restore",
  file: string,
  actions: ContextEditAction[],
  routed: CliRoute,
  io: { args: ParsedArgs; pi: UserPi | undefined; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const { args, out, err } = io;
  const json = args.flags.has("json");
  const announcement = routed.announcement!;
  const who = piName(announcement);
  const connection = await connectRoute(announcement);
  try {
    const leafId = connection.state.leafId ?? null;
    const plan = await planContextEdits(file, actions, { guardSeconds: 0, procRoot: null, leafId, surface: "cli" });
    const preview = trimPreviewOf(plan, args, io.pi);
    const dryRun = args.flags.has("dry-run");
    if (json && (dryRun || preview.refused.length > 0 || plan.preparation.drafts.length === 0))
      out(
        JSON.stringify(
          { ...(previewJson(plan, preview, dryRun) as object), written: false, by: announcement.pid },
          null,
          2,
        ),
      );
    else if (!json) (dryRun ? out : err)(formatTrimPreview(plan, preview));
    if (preview.refused.length > 0) {
      err(refusalText(preview));
      return 1;
    }
    if (plan.preparation.drafts.length === 0) {
      if (!json) out("Nothing to change. Nothing was written.");
      return 0;
    }
    if (dryRun) {
      if (!json)
        out(
          `\nDry run: nothing was sent. ${who} has this session open with the live bridge: it would append these edits itself.`,
        );
      return 0;
    }
    const r = await connection.request("contextEdit", { drafts: [...plan.preparation.drafts], leafId });
    if (json) {
      out(
        JSON.stringify(
          {
            written: r.status === "applied",
            status: r.status,
            by: announcement.pid,
            batchId: r.batchId,
            entries: r.entries,
            leafId: r.leafId,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const verb = name === "trim" ? "trim" : "restore";
    out(
      r.status === "applied"
        ? `${who} did the ${verb} through its live bridge: it appended ${plural(r.entries.length, "context edit")} (${r.entries.map((e) => `${e.id} → ${e.targetId}`).join(", ")}).`
        : `${who} is answering: it appends ${plural(plan.preparation.drafts.length, "context edit")} at its next turn boundary (batch ${r.batchId}).`,
    );
    return 0;
  } finally {
    connection.close();
  }
}

function refusalText(p: TrimPreviewModel): string {
  return `Refused: ${p.refused.map((r) => `${r.targetId}: ${withPeriod(r.message)}`).join(" ")} Nothing was written (change the list of entries and try again).`;
}

/** `pi-context trim`. */
export const trimCommand: CliCommand = (argv, out, err) => run("trim", argv, out, err);

/** `pi-context restore`. */
export const restoreCommand: CliCommand = (argv, out, err) => run("restore", argv, out, err);
