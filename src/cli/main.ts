/**
 * `pi-context` command line: the same core as the extension, without VS Code.
 *
 *   pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID]
 *                      [--project-settings auto|always|never] [--context-window N]
 *   pi-context compact | tree | switch …   (compactCli.ts, treeCli.ts)
 *
 * Exit codes: 0 done, 1 refused or failed (nothing written; also: not a pi session), 2 usage.
 * Messages are full sentences; numbers use thousands separators (en-US).
 */

import * as path from "node:path";
import { compactCommand, COMPACT_USAGE } from "./compact";
import { analyzeSession, type Analysis } from "../core/rules/analyze";
import type { InspectResult } from "../core/rules/inspect";
import { getAgentDir, type ProjectSettingsMode } from "../core/rules/settings";
import { SWITCH_USAGE, switchCommand, TREE_USAGE, treeCommand } from "./tree";

/** Parsed command-line flags: `--name value`, `--flag`, and positional arguments. */
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
}

/** Parse `argv` (without node and script). Flags listed in `booleans` take no value. */
export function parseArgs(argv: readonly string[], booleans: ReadonlySet<string>): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
      else if (booleans.has(arg.slice(2))) flags.set(arg.slice(2), true);
      else {
        const value = argv[i + 1];
        if (value === undefined) throw new UsageError(`${arg} needs a value.`);
        flags.set(arg.slice(2), value);
        i++;
      }
    } else positional.push(arg);
  }
  return { positional, flags };
}

/** A user error on the command line (exit code 2). */
export class UsageError extends Error {}

function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === "string" ? v : undefined;
}

/** The analysis options the shared flags describe. */
export function analyzeOptionsFrom(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env) {
  const agentDir = flag(args, "agent-dir") ? path.resolve(flag(args, "agent-dir")!) : getAgentDir(env);
  const mode = flag(args, "project-settings") ?? "auto";
  if (!["auto", "always", "never"].includes(mode))
    throw new UsageError("--project-settings must be auto, always or never.");
  const windowFlag = flag(args, "context-window");
  const contextWindow = windowFlag !== undefined ? Number(windowFlag) : undefined;
  if (contextWindow !== undefined && !(contextWindow > 0))
    throw new UsageError("--context-window must be a positive number.");
  const leaf = flag(args, "leaf");
  return {
    agentDir,
    projectSettings: mode as ProjectSettingsMode,
    ...(flag(args, "cwd") ? { cwd: path.resolve(flag(args, "cwd")!) } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(leaf !== undefined ? { leafId: leaf === "null" ? null : leaf } : {}),
  };
}

const n = (v: number) => v.toLocaleString("en-US");

/** Where a pi setting came from, in words: `global settings: /…/settings.json`. */
function sourceText(s: { source: string; file?: string; key?: string; error?: string }): string {
  if (s.error) return `invalid: ${s.error}`;
  if (s.source === "default") return "pi's default";
  const where =
    s.source === "override"
      ? "compaction.modelOverrides in"
      : s.source === "project"
        ? "project settings"
        : "global settings";
  return `${where}${s.file ? `: ${s.file}` : ""}`;
}

/** Where a context window came from, in words. */
function windowSourceText(w: InspectResult["contextWindow"]): string {
  const words: Record<InspectResult["contextWindow"]["source"], string> = {
    catalog: "pi's built-in model catalog",
    "models-store": "pi's cached model catalog (models-store.json)",
    "models-json": "models.json",
    "models-json-override": "a modelOverrides entry of models.json",
    unknown: "unknown",
    live: "given on the command line",
  };
  const what = words[w.source];
  if (!w.detail) return what;
  if (w.source === "unknown") return w.detail;
  if (w.source === "catalog" || w.source === "live") return what;
  return `${what}: ${w.detail}`;
}

/** `label` padded to the report's first column. */
const row = (label: string, text: string) => `${label.padEnd(12)}${text}`;

/** The human-readable `inspect` report. */
export function formatInspect(analysis: Analysis): string {
  const r: InspectResult = analysis.inspect;
  const lines: string[] = [];
  const model = r.model ? `${r.model.provider}/${r.model.modelId}` : "(none on the session's path)";
  if (r.sessionName) lines.push(row("session", r.sessionName));
  lines.push(row("file", r.file));
  lines.push(row("entries", `${n(r.entryCount)}; leaf ${r.leafId ?? "(none)"}`));
  lines.push(
    row(
      "model",
      `${analysis.selection ? `${analysis.selection.provider}/${analysis.selection.modelId}` : model}${analysis.selection?.source === "settings-default" ? " (pi's default model from settings.json)" : ""}`,
    ),
  );
  const win = r.contextWindow.value;
  lines.push(
    row(
      "window",
      `${win ? `${n(win)} tokens, from ${windowSourceText(r.contextWindow)}` : `unknown (${windowSourceText(r.contextWindow)})`}`,
    ),
  );
  const how =
    r.estimate.method === "usage+estimate"
      ? `last reported usage ${n(r.estimate.usageTokens)} + estimate of later messages ${n(r.estimate.trailingTokens)}`
      : `estimate of all messages`;
  lines.push(
    row(
      "context",
      `${n(r.contextTokens)} tokens${r.percent !== null ? ` = ${r.percent.toFixed(1)}% of the window` : ""} (${how})${r.usageKnown ? "" : "; pi shows ? until its next answer"}`,
    ),
  );
  lines.push(row("pi footer", r.footer));
  lines.push(
    row(
      "auto",
      `compaction ${r.compactionEnabled.value ? "enabled" : "disabled"} (${sourceText(r.compactionEnabled)})`,
    ),
  );
  lines.push(
    row(
      "reserve",
      `${r.reserveTokens.value !== null ? `${n(r.reserveTokens.value)} tokens` : "?"} (${sourceText(r.reserveTokens)})`,
    ),
  );
  lines.push(
    row(
      "keep",
      `${r.keepRecentTokens.value !== null ? `${n(r.keepRecentTokens.value)} tokens` : "?"} (${sourceText(r.keepRecentTokens)})`,
    ),
  );
  if (r.threshold !== null) {
    const until = r.tokensUntilCompaction!;
    const state = !r.compactionEnabled.value
      ? "auto-compaction is off"
      : until >= 0
        ? `${n(until)} tokens until auto-compaction`
        : `over by ${n(-until)} tokens: pi auto-compacts at its next check (after the current answer or before the next request)`;
    lines.push(row("threshold", `${n(r.threshold)} tokens (window − reserve); ${state}`));
  } else lines.push(row("threshold", "unknown (no context window, or reserveTokens is invalid)"));
  lines.push("");
  if (r.compaction) {
    const c = r.compaction;
    const k = (label: string, text: string) => `  ${label.padEnd(18)}${text}`;
    lines.push("compaction preview (what pi's /compact would do now)");
    lines.push(k("first kept entry", c.firstKeptEntryId));
    lines.push(k("split turn", c.isSplitTurn ? `yes (the turn starts at ${c.turnStartEntryId})` : "no"));
    lines.push(k("tokens before", n(c.tokensBefore)));
    lines.push(
      k(
        "summarized",
        `${n(c.summarizedEntryIds.length)} entries${c.turnPrefixEntryIds.length ? ` + ${n(c.turnPrefixEntryIds.length)} turn-prefix entries` : ""}, ≈${n(c.summarizedTokens)} tokens${c.hasPreviousSummary ? ` (+ the summary of compaction ${c.previousCompactionId})` : ""}`,
      ),
    );
    lines.push(
      k(
        "kept",
        `${n(c.keptEntryCount)} entries, ≈${n(c.keptTokens)} tokens${c.keptExceedsKeepRecent ? " (more than keepRecentTokens: a tool call and its results stay together)" : ""}`,
      ),
    );
    lines.push(k("after", `≈${n(c.tokensAfterWithoutSummary)} tokens + the summary`));
    lines.push(k("read files", c.readFiles.length ? c.readFiles.join(", ") : "(none)"));
    lines.push(k("modified files", c.modifiedFiles.length ? c.modifiedFiles.join(", ") : "(none)"));
  } else lines.push(`compaction preview: none — ${withPeriod(r.compactionUnavailable ?? "nothing to compact")}`);
  const problems = [
    ...r.settingsProblems.map((p) => `settings: ${p.message}`),
    ...(analysis.modelsError ? [`models: ${analysis.modelsError.split("\n")[0]}`] : []),
    ...r.diagnostics.map((d) => `${d.severity}: ${d.message}`),
  ];
  if (problems.length) {
    lines.push("");
    lines.push("diagnostics");
    for (const p of problems.slice(0, 50)) lines.push(`  ${p}`);
    if (problems.length > 50) lines.push(`  … ${n(problems.length - 50)} more`);
  }
  return lines.join("\n");
}

/** `text` with a final period unless it already ends a sentence. */
export function withPeriod(text: string): string {
  return /[.!?…:]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`;
}

/** `pi-context inspect`. */
async function inspectCommand(argv: readonly string[], out: (s: string) => void): Promise<number> {
  const args = parseArgs(argv, new Set(["json"]));
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError(`usage:\n${formatUsage(INSPECT_USAGE, 2)}`);
  for (const name of args.flags.keys())
    if (!INSPECT_FLAGS.has(name))
      throw new UsageError(`Unknown flag --${name}.\nusage:\n${formatUsage(INSPECT_USAGE, 2)}`);
  const analysis = await analyzeSession(path.resolve(file), analyzeOptionsFrom(args));
  const session = analysis.session;
  if (session.invalid || !session.header) throw new NotASessionError(file, session.size === 0);
  if (args.flags.has("json")) out(JSON.stringify(analysis.inspect, null, 2));
  else out(formatInspect(analysis));
  return 0;
}

/** The file is not a pi session (first line is no session header) or is empty. */
export class NotASessionError extends Error {
  constructor(file: string, empty: boolean) {
    super(
      empty
        ? `${file} is empty: not a pi session.`
        : `${file} is not a pi session: its first line is not a session header ({"type":"session",…}).`,
    );
    this.name = "NotASessionError";
  }
}

/** A CLI sub-command: returns the exit code. */
export type CliCommand = (
  argv: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
) => Promise<number>;

/** All sub-commands by name. */
export const cliCommands = new Map<string, CliCommand>([
  ["inspect", inspectCommand],
  ["compact", (argv, out, err) => compactCommand(argv, out, err)],
  ["tree", (argv, out, err) => treeCommand(argv, out, err)],
  ["switch", (argv, out, err) => switchCommand(argv, out, err)],
]);

const INSPECT_USAGE = `pi-context inspect <session.jsonl> [--json] [--agent-dir DIR] [--cwd DIR] [--leaf ID]
  [--project-settings auto|always|never] [--context-window N]`;

const INSPECT_FLAGS = new Set(["json", "agent-dir", "cwd", "leaf", "project-settings", "context-window"]);

/**
 * One command's usage, indented by `indent` spaces, continuation lines aligned under its first
 * argument; "API key:" lines are dropped (the help lists the environment once).
 */
export function formatUsage(usage: string, indent: number): string {
  const lines = usage.split("\n").filter((l) => !/^\s*API key:/.test(l));
  const first = lines[0]!.trim();
  const m = /^pi-context \S+ /.exec(first);
  const column = indent + (m ? m[0].length : 2);
  return [" ".repeat(indent) + first, ...lines.slice(1).map((l) => " ".repeat(column) + l.trim())].join("\n");
}

const USAGE = `pi-context — see and steer pi's context window

usage:
${[INSPECT_USAGE, COMPACT_USAGE, TREE_USAGE, SWITCH_USAGE].map((u) => formatUsage(u, 2)).join("\n")}

environment:
  PI_CODING_AGENT_DIR   pi's agent dir (default ~/.pi/agent; --agent-dir overrides it)
  PI_CONTEXT_API_KEY    API key of the summarizer (compact, switch --summarize); OPENAI_API_KEY
                        is used when it is not set; there is no flag for it
  PI_CONTEXT_BASE_URL   default of --base-url (else OpenAI)
  PI_CONTEXT_MODEL      default of --model (else gpt-4o-mini)

exit codes: 0 done, 1 refused or failed (nothing written), 2 usage error.`;

/** A failure's message for the terminal: file-system errors in words, always a full sentence. */
function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const file = typeof e?.path === "string" ? e.path : undefined;
  if (e?.code === "ENOENT" && file) return `${file}: no such file.`;
  if (e?.code === "EISDIR") return `${file ?? "the path"} is a directory, not a session file.`;
  if ((e?.code === "EACCES" || e?.code === "EPERM") && file) return `${file}: permission denied.`;
  return withPeriod(e instanceof Error ? e.message : String(error));
}

/** Run the CLI. @returns the process exit code (0 ok, 1 failure, 2 usage). */
export async function main(
  argv: readonly string[],
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    out(USAGE);
    return command ? 0 : 2;
  }
  const run = cliCommands.get(command);
  if (!run) {
    err(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }
  try {
    return await run(rest, out, err);
  } catch (error) {
    if (error instanceof UsageError) {
      err(error.message);
      return 2;
    }
    err(`pi-context ${command}: ${errorText(error)}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
