/**
 * `pi-context doctor <session.jsonl> [--json] [--repair [--dry-run]] …`: the session doctor
 * (`core/health/`) on one file — what breaks the session for pi or its provider, what pi does about
 * it, and the fix; with `--repair` the entries that fix the model context are appended (one
 * append, proven first on the session as if appended; `--dry-run` only shows them); with
 * `--end-line` a last line without `\n` is first ended as pi itself does when it opens the session
 * (one `\n`, `endFinalLine`), so the repair can append after it.
 *
 * Exit codes: 0 no error (after a repair: none left), 1 errors found (or the repair was refused
 * or failed; nothing written), 2 usage. `--json` prints
 * `{"findings": [{code, severity, entryId, relatedIds, message, repair}], …}` where `repair` is
 * null or `{kind, description, appends}` (`appends`: the entries it appends; a compaction's are
 * written by `pi-context compact`).
 */

import { clipLabel } from "../core/rules/sessionLabel";
import * as path from "node:path";
import {
  endFinalLine,
  planSessionRepair,
  runRepairFlow,
  type RepairFlowOptions,
  type SessionRepairPlan,
} from "../core/flows/repair";
import { ACTIONS } from "../core/access/route";
import { LiveSessionError } from "../core/access/words";
import type { ContextEditEntry } from "../core/types";
import { cliRoute, connectRoute, piName } from "./route";
import { healthCounts } from "../core/health/doctor";
import type { HealthFinding, HealthReport } from "../core/health/types";
import type { SessionEntry } from "../core/types";
import { lineText, terminalText } from "../shared/untrusted";
import {
  analyzeOptionsFrom,
  checkFlags,
  errorText,
  formatUsage,
  intFlag,
  NotASessionError,
  parseArgs,
  UsageError,
  userPiFrom,
  type CliCommand,
} from "./args";

export const DOCTOR_USAGE = `pi-context doctor <session.jsonl> [--json] [--end-line] [--repair [--dry-run] [--force]] [--guard-seconds N]
  [--agent-dir DIR] [--cwd DIR] [--project-settings auto|always|never] [--context-window N] [--pi PATH]`;

const DOCTOR_FLAGS = new Set([
  "json",
  "end-line",
  "repair",
  "dry-run",
  "force",
  "guard-seconds",
  "agent-dir",
  "cwd",
  "project-settings",
  "context-window",
  "pi",
]);

/** One finding as JSON (`--json`): the issue's keys, plus `line` when the finding is tied to one. */
export function findingJson(f: HealthFinding, appends: SessionEntry[] | undefined): object {
  return {
    code: f.code,
    severity: f.severity,
    entryId: f.entryId,
    relatedIds: f.relatedIds,
    message: f.message,
    ...(f.line !== undefined ? { line: f.line } : {}),
    ...(f.file !== undefined ? { file: f.file } : {}),
    repair: f.repair
      ? {
          kind: f.repair.kind,
          description: f.repair.description,
          appends: f.repair.kind === "compaction" ? [] : (appends ?? []),
          ...(f.repair.kind === "compaction" ? { command: "pi-context compact" } : {}),
        }
      : null,
  };
}

const WIDTH = 100;

/** Words wrapped at {@link WIDTH}, continuation lines indented. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > WIDTH - indent.length) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines;
}

/** The findings as text, one block each. */
export function formatReport(
  report: HealthReport,
  appendsOf: (f: HealthFinding) => SessionEntry[] | undefined,
): string[] {
  const lines: string[] = [];
  for (const f of report.findings) {
    const where = [f.entryId ? `entry ${f.entryId}` : "", f.line !== undefined ? `line ${f.line}` : "", f.file ?? ""]
      .filter(Boolean)
      .join(", ");
    lines.push(terminalText(`${f.severity.padEnd(7)} ${f.code}${where ? `  (${where})` : ""}`));
    lines.push(...wrap(terminalText(f.message), "        "));
    if (f.repair) {
      const n = appendsOf(f)?.length ?? 0;
      lines.push(
        ...wrap(
          terminalText(
            `repair: ${f.repair.description}${f.repair.kind === "compaction" ? " — run pi-context compact" : n > 1 ? ` (${n} entries)` : ""}`,
          ),
          "        ",
        ),
      );
    }
    lines.push("");
  }
  return lines;
}

/** `pi-context doctor`. */
export const doctorCommand: CliCommand = async (argv, out, err) => {
  const args = parseArgs(argv, new Set(["json", "repair", "dry-run", "force", "end-line"]));
  const [file] = args.positional;
  if (!file || args.positional.length > 1) throw new UsageError(`usage:\n${formatUsage(DOCTOR_USAGE, 2)}`);
  checkFlags(args, DOCTOR_FLAGS, DOCTOR_USAGE);
  const repair = args.flags.has("repair");
  const dryRun = args.flags.has("dry-run");
  if (dryRun && !repair) throw new UsageError("--dry-run needs --repair.");
  const json = args.flags.has("json");
  const analyze = analyzeOptionsFrom(args);
  if (analyze.leafId !== undefined)
    throw new UsageError("doctor checks the file's leaf (the one pi resumes at); --leaf is not supported.");
  const absolute = path.resolve(file);
  const guardSeconds = intFlag(args, "guard-seconds") ?? 30;
  const force = args.flags.has("force");
  if (args.flags.has("end-line")) {
    if (dryRun) throw new UsageError("--end-line writes; it does not go with --dry-run.");
    const ended = await endLine(absolute, { analyze, guardSeconds, force }, out, err);
    if (!ended) return 1;
  }
  const routeOf = (leaf: boolean) =>
    cliRoute(absolute, leaf ? ACTIONS.repairLeaf : ACTIONS.repair, { agentDir: analyze.agentDir, guardSeconds, force });
  const first = repair && !dryRun ? await routeOf(false) : undefined;
  const options: RepairFlowOptions = {
    ...analyze,
    pi: await userPiFrom(args),
    ...(first ? first.flowOptions : { guardSeconds }),
    surface: "cli",
  };
  let plan = await planSessionRepair(absolute, options);
  // No header at all (every line unparseable, e.g. not a session file): pi does not open it, as
  // inspect and tree say; a first parsed line that is not a header is the not-a-session finding.
  if (plan.session.size === 0 || (!plan.session.header && !plan.session.invalid))
    throw new NotASessionError(absolute, plan.session.size === 0);
  if (!repair) {
    const appendsOf = appendsIndex(plan);
    if (json)
      out(
        JSON.stringify(
          { file: absolute, findings: plan.report.findings.map((f) => findingJson(f, appendsOf(f))) },
          null,
          2,
        ),
      );
    else printText(plan, appendsOf, out);
    return plan.report.errors > 0 ? 1 : 0;
  }

  let written = false;
  let after: HealthReport = plan.repair.after;
  let failure: string | undefined = refusalOf(plan);
  let by: string | undefined;
  const routed =
    plan.repair.entries.length > 0 && !failure && !dryRun
      ? await routeOf(plan.repair.entries.some((e) => e.type !== "context_edit"))
      : undefined;
  if (routed?.route.kind === "refuse") failure = routed.refusal;
  else if (routed?.route.kind === "bridge" && routed.announcement) {
    // the running pi appends the repair's context edits itself (at once, or at its next turn boundary)
    const connection = await connectRoute(routed.announcement);
    try {
      const r = await connection.request("contextEdit", {
        drafts: (plan.repair.entries as ContextEditEntry[]).map((e) => ({
          type: "context_edit",
          targetId: e.targetId,
          replacement: e.replacement,
        })),
        leafId: plan.session.leafId,
      });
      by = `${piName(routed.announcement)} ${r.status === "applied" ? "appended them itself through its live bridge" : "appends them at its next turn boundary"}`;
      written = r.status === "applied";
      if (written) after = plan.repair.after;
    } catch (error) {
      failure = `${piName(routed.announcement)} did not take the repair: ${errorText(error)} Nothing was written.`;
    } finally {
      connection.close();
    }
  } else if (plan.repair.entries.length > 0 && !failure && !dryRun) {
    try {
      // the flow every surface shares: when another writer appends meanwhile, it reads the file
      // again and plans again (at most MAX_REPAIR_ATTEMPTS times), as the other write flows do
      const outcome = await runRepairFlow(absolute, options, {
        confirm: (next) => {
          plan = next;
          return Promise.resolve(refusalOf(next) === undefined);
        },
      });
      plan = outcome.plan;
      if (outcome.kind === "repaired") {
        written = true;
        after = outcome.result.after;
      } else {
        after = plan.repair.after;
        failure = outcome.kind === "declined" ? refusalOf(plan) : undefined;
      }
    } catch (error) {
      // refused (live session, file keeps changing, cannot take an append): nothing was written
      failure = error instanceof LiveSessionError ? error.message : errorText(error);
    }
  }
  const entries = plan.repair.entries;
  const appendsOf = appendsIndex(plan);
  if (json) {
    out(
      JSON.stringify(
        {
          file: absolute,
          findings: plan.report.findings.map((f) => findingJson(f, appendsOf(f))),
          repair: {
            dryRun,
            written,
            ...(by ? { by: routed?.announcement?.pid } : {}),
            appends: entries,
            ...(failure ? { refused: failure } : {}),
            findingsAfter: (written || dryRun ? after : plan.report).findings.map((f) => findingJson(f, undefined)),
          },
        },
        null,
        2,
      ),
    );
  } else {
    printText(plan, appendsOf, out, false);
    if (entries.length === 0) out("repair: nothing an appended entry can fix.");
    else {
      out(
        `repair: ${dryRun ? "would append" : written ? "appended" : "did not append"} ${entries.length} ${entries.length === 1 ? "entry" : "entries"}:`,
      );
      for (const e of entries) out(terminalText(`  ${JSON.stringify(e)}`));
      if (by) out(`by ${by}.`);
      if (failure) err(terminalText(`pi-context doctor: ${failure}`));
      else {
        out("");
        out(
          `after the repair${dryRun ? " (checked on the session as if appended)" : " (the file read back)"}: ${after.errors === 0 ? "no error" : healthCounts(after)}${after.errors === 0 && (after.warnings || after.infos) ? ` (${healthCounts(after)})` : ""}.`,
        );
      }
    }
    if (plan.repair.compaction.length > 0)
      out(`A compaction would help too: pi-context compact ${JSON.stringify(absolute)} (needs a summarizer).`);
  }
  if (failure) return 1;
  // the exit code describes the file as it is now: repaired when written, else as read
  return (written ? after : plan.report).errors > 0 ? 1 : 0;
};

/** Why the plan's entries must not be appended (the file cannot take an append, or the proof failed); undefined when they may. */
function refusalOf(plan: SessionRepairPlan): string | undefined {
  if (plan.repair.entries.length === 0) return undefined;
  return (
    plan.unsafe ??
    (plan.repair.remaining.length > 0
      ? `the planned repair would leave ${plan.repair.remaining.length} error(s); nothing was written`
      : undefined)
  );
}

/**
 * `--end-line`: pi's own fix of a last line without `\n`, behind the access check. Prints what was
 * done (or why not); false when nothing was written.
 */
async function endLine(
  file: string,
  o: { analyze: ReturnType<typeof analyzeOptionsFrom>; guardSeconds: number; force: boolean },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<boolean> {
  const route = await cliRoute(file, ACTIONS.endLine, {
    agentDir: o.analyze.agentDir,
    guardSeconds: o.guardSeconds,
    force: o.force,
  });
  if (route.refusal) {
    err(route.refusal);
    return false;
  }
  try {
    const r = await endFinalLine(file, { ...o.analyze, ...route.flowOptions, surface: "cli" });
    out(
      `ended the last line (${r.lineBytes} ${r.lineBytes === 1 ? "byte" : "bytes"} without a newline) as pi does when it opens the session: appended a newline (${r.bytesBefore} → ${r.bytesAfter} bytes).`,
    );
    return true;
  } catch (error) {
    err(`${errorText(error)}`);
    return false;
  }
}

function printText(
  plan: SessionRepairPlan,
  appendsOf: (f: HealthFinding) => SessionEntry[] | undefined,
  out: (s: string) => void,
  hint = true,
): void {
  const report = plan.report;
  out(lineText(`session  ${plan.session.name ? `${clipLabel(plan.session.name)} — ` : ""}${plan.file}`));
  out(
    `health   ${report.findings.length === 0 ? "no problems found" : healthCounts(report)}; leaf ${lineText(report.leafId ?? "(none)")}`,
  );
  out("");
  for (const line of formatReport(report, appendsOf)) out(line);
  if (hint && plan.tornLineBytes !== undefined)
    out(
      `the last line has no newline (${plan.tornLineBytes} bytes: an interrupted write); pi ends it when it next opens the session — pi-context doctor --end-line does the same now.`,
    );
  const fixable = report.findings.filter((f) => f.repair && f.repair.kind !== "compaction").length;
  if (hint && fixable > 0 && plan.repair.entries.length > 0)
    out(
      `${fixable} ${fixable === 1 ? "finding" : "findings"} can be repaired by appending ${plan.repair.entries.length} ${plan.repair.entries.length === 1 ? "entry" : "entries"}: pi-context doctor --repair [--dry-run]`,
    );
}

/** The appended entries per finding (from the plan's fixes). */
function appendsIndex(plan: SessionRepairPlan): (f: HealthFinding) => SessionEntry[] | undefined {
  const byFinding = new Map<HealthFinding, SessionEntry[]>();
  for (const fix of plan.repair.fixes) byFinding.set(fix.finding, fix.entries);
  return (f) => byFinding.get(f);
}
