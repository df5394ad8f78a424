/**
 * "Pi: Compact At…" (`piContext.compactAt`): tune when pi auto-compacts the current session's model
 * — `compaction.modelOverrides["provider/model"].reserveTokens` from a percentage of the window or
 * a token count (the threshold), or `.keepRecentTokens` (what a compaction keeps) — in the user's
 * pi settings, with the resulting threshold shown before anything is written. The edit itself is
 * `core/flows/compactAt.ts` (jsonc-parser, pi's lock, one key only, strict JSON kept).
 *
 * `piContext.compactAt({field?, value?, yes?})` skips the questions given (tests, keybindings);
 * resolves with a {@link CompactAtOutcome}.
 */

import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  compactAtValue,
  parseCompactAtInput,
  settingsFileFor,
  SettingsChangedError,
  SettingsEditError,
  writeCompactionOverride,
  type CompactAtField,
  type CompactAtValue,
} from "../core/flows/compactAt";
import { resolveSettings } from "../core/rules/settings";
import type { Services } from "../services";
import { formatCount as n } from "../shared/format";
import { inputMessageText, visibleText } from "../shared/untrusted";
import { safePickItems } from "../ui/prompter";
import * as notify from "../ui/notify";

/** What `piContext.compactAt` resolves with. */
export type CompactAtOutcome =
  | { kind: "written"; file: string; key: string; field: CompactAtField; value: number; threshold: number }
  | { kind: "declined" }
  | { kind: "refused"; message: string };

/** Options of `piContext.compactAt` (each one given skips its question). */
export interface CompactAtOptions {
  field?: CompactAtField;
  /** `80%`, `150000`, `150k`. */
  value?: string;
  /** Write without the confirmation. */
  yes?: boolean;
}

function pct(value: number): string {
  return `${value.toFixed(value % 1 === 0 ? 0 : 1)} %`;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Register `piContext.compactAt`. */
export function registerCompactAt(services: Services): void {
  const run = async (arg?: unknown): Promise<CompactAtOutcome> => {
    const options: CompactAtOptions = arg && typeof arg === "object" ? (arg as CompactAtOptions) : {};
    const current = services.sessions.current;
    const refuse = (message: string): CompactAtOutcome => {
      void notify.warn(message);
      return { kind: "refused", message };
    };
    if (!current) return refuse("no pi session is shown: Compact At… tunes the model of the current session.");
    const analysis = current.analysis;
    const model = analysis.selection;
    const window = analysis.inspect.contextWindow.value;
    if (!model) return refuse("the session has no model (and pi's settings no default model).");
    if (!window) return refuse(`the context window of ${model.provider}/${model.modelId} is unknown.`);
    const key = `${model.provider}/${model.modelId}`;
    const reserve = analysis.settings.compaction.reserveTokens;
    const keep = analysis.settings.compaction.keepRecentTokens;
    const threshold = window - (reserve.value ?? 0);
    const now = `Now: pi auto-compacts ${key} above ${n(threshold)} tokens (${pct((threshold / window) * 100)} of ${n(window)}; reserveTokens ${n(reserve.value ?? 0)}${reserve.source === "default" ? ", pi's default" : ""}), and keeps ${n(keep.value ?? 0)} tokens (keepRecentTokens).`;

    let field = options.field;
    if (!field) {
      const pick = await vscode.window.showQuickPick(
        safePickItems([
          {
            field: "reserveTokens" as const,
            label: "$(dashboard) Auto-compact at…",
            description: `now above ${n(threshold)} tokens (${pct((threshold / window) * 100)})`,
            detail: `Sets compaction.modelOverrides["${key}"].reserveTokens (window − threshold)`,
          },
          {
            field: "keepRecentTokens" as const,
            label: "$(history) Keep after compaction…",
            description: `now ${n(keep.value ?? 0)} tokens`,
            detail: `Sets compaction.modelOverrides["${key}"].keepRecentTokens (what a compaction keeps verbatim)`,
          },
        ]),
        { title: visibleText(`Pi: Compact At… — ${key}`), placeHolder: visibleText(now), ignoreFocusOut: true },
      );
      if (!pick) return { kind: "declined" };
      field = pick.field;
    }
    const evaluate = (text: string): CompactAtValue | { error: string } => {
      const input = parseCompactAtInput(text);
      if (!input) return { error: "Type a percentage of the window (80%) or a token count (150000, 150k)." };
      return compactAtValue(field!, input, window, reserve.value ?? 0);
    };
    const describe = (v: CompactAtValue) =>
      v.field === "reserveTokens"
        ? `pi will auto-compact above ${n(v.threshold)} tokens (${pct(v.percent)} of ${n(window)}): reserveTokens = ${n(v.value)}`
        : `a compaction will keep ${n(v.value)} tokens verbatim: keepRecentTokens = ${n(v.value)} (threshold stays ${n(v.threshold)})`;
    const text =
      options.value ??
      (await vscode.window.showInputBox({
        title: visibleText(
          `Pi: Compact At… — ${field === "reserveTokens" ? "when pi auto-compacts" : "what a compaction keeps"} (${key})`,
        ),
        prompt: inputMessageText(now),
        placeHolder: field === "reserveTokens" ? "e.g. 80% or 150000" : "e.g. 10% or 20k",
        ignoreFocusOut: true,
        validateInput: (t) => {
          if (!t.trim()) return undefined;
          const v = evaluate(t);
          return "error" in v
            ? v.error
            : { message: inputMessageText(describe(v)), severity: vscode.InputBoxValidationSeverity.Info };
        },
      }));
    if (text === undefined || !text.trim()) return { kind: "declined" };
    const value = evaluate(text);
    if ("error" in value) return refuse(value.error);

    const target = settingsFileFor(field === "reserveTokens" ? reserve : keep, current.agentDir);
    const before = readText(target.file);
    if (!options.yes) {
      const ok = await vscode.window.showQuickPick(
        safePickItems([
          {
            go: true,
            label: `$(check) Set ${field} = ${n(value.value)}`,
            description: describe(value),
            detail: `In ${target.file}: compaction.modelOverrides["${key}"].${field} — only this key changes. A running pi uses it after /reload or a restart.`,
          },
          { go: false, label: "$(close) Cancel", detail: "Nothing is written." },
        ]),
        { title: visibleText(`Pi: Compact At… — ${key}`), placeHolder: visibleText(now), ignoreFocusOut: true },
      );
      if (!ok?.go) return { kind: "declined" };
    }
    try {
      writeCompactionOverride(target.file, before, key, field, value.value);
    } catch (error) {
      if (error instanceof SettingsChangedError || error instanceof SettingsEditError) return refuse(error.message);
      services.log.error(`compact at: ${(error as Error).stack ?? error}`);
      return refuse(`could not write ${target.file}: ${(error as Error).message}. Nothing was written.`);
    }
    services.log.info(`compact at: ${target.file}: compaction.modelOverrides["${key}"].${field} = ${value.value}`);
    // check that pi's rules now resolve the value for the model (a project override would win over a global one)
    const resolved = resolveSettings({
      agentDir: current.agentDir,
      ...(analysis.settings.cwd ? { cwd: analysis.settings.cwd } : {}),
      modelKey: key,
      projectSettings: services.config().projectSettings,
    });
    const effective = resolved.compaction[field];
    if (effective.value !== value.value)
      void notify.warn(
        `wrote ${field} = ${n(value.value)} to ${target.file}, but ${effective.key} in ${effective.file ?? "another settings file"} wins (${n(effective.value ?? 0)}).`,
      );
    else void notify.info(`${describe(value)}. A running pi uses it after /reload or a restart.`);
    void services.sessions.refresh().catch(() => undefined);
    return { kind: "written", file: target.file, key, field, value: value.value, threshold: value.threshold };
  };
  services.context.subscriptions.push(vscode.commands.registerCommand("piContext.compactAt", run));
}
