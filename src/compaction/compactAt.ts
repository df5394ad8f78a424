/**
 * "Pi Context: Compact At…" (`piContext.compactAt`): tune when pi auto-compacts the current session's model
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
import { resolveSettings, type Sourced } from "../core/rules/settings";
import type { CurrentSession, Services } from "../services";
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

/** What the questions and the write of one `piContext.compactAt` share. */
interface CompactAtRun {
  services: Services;
  current: CurrentSession;
  /** The override's key: `provider/model`. */
  key: string;
  /** The model's context window, in tokens. */
  window: number;
  reserve: Sourced<number>;
  keep: Sourced<number>;
  /** The current threshold and keep, as every question's placeholder or prompt says them. */
  now: string;
}

/** Register `piContext.compactAt`. */
export function registerCompactAt(services: Services): void {
  const run = async (arg?: unknown): Promise<CompactAtOutcome> => {
    const options: CompactAtOptions = arg && typeof arg === "object" ? (arg as CompactAtOptions) : {};
    const c = compactAtRun(services);
    if ("kind" in c) return c;
    const field = options.field || (await pickField(c));
    if (!field) return { kind: "declined" };
    const text = options.value ?? (await askValue(c, field));
    if (text === undefined || !text.trim()) return { kind: "declined" };
    const value = evaluate(c, field, text);
    if ("error" in value) return refuse(value.error);
    const target = settingsFileFor(field === "reserveTokens" ? c.reserve : c.keep, c.current.agentDir);
    const before = readText(target.file);
    if (!options.yes && !(await confirmWrite(c, value, target.file))) return { kind: "declined" };
    return writeOverride(c, value, target.file, before);
  };
  services.commands.add({ "piContext.compactAt": run });
}

function refuse(message: string): CompactAtOutcome {
  void notify.warn(message);
  return { kind: "refused", message };
}

/** The current session's model, window and settings; refused without a session, a model or a known window. */
function compactAtRun(services: Services): CompactAtRun | CompactAtOutcome {
  const current = services.sessions.current;
  if (!current)
    return refuse(vscode.l10n.t("no pi session is shown: Compact At… tunes the model of the current session."));
  const analysis = current.analysis;
  const model = analysis.selection;
  const window = analysis.inspect.contextWindow.value;
  if (!model) return refuse(vscode.l10n.t("the session has no model (and pi's settings no default model)."));
  if (!window) return refuse(vscode.l10n.t("the context window of {0}/{1} is unknown.", model.provider, model.modelId));
  const key = `${model.provider}/${model.modelId}`;
  const reserve = analysis.settings.compaction.reserveTokens;
  const keep = analysis.settings.compaction.keepRecentTokens;
  const threshold = window - (reserve.value ?? 0);
  const now = vscode.l10n.t(
    "Now: pi auto-compacts {0} above {1} tokens ({2} of {3}; reserveTokens {4}{5}), and keeps {6} tokens (keepRecentTokens).",
    key,
    n(threshold),
    pct((threshold / window) * 100),
    n(window),
    n(reserve.value ?? 0),
    reserve.source === "default" ? vscode.l10n.t(", pi's default") : "",
    n(keep.value ?? 0),
  );
  return { services, current, key, window, reserve, keep, now };
}

/** Which setting to change: when pi auto-compacts (reserveTokens) or what a compaction keeps; undefined = Escape. */
async function pickField({ key, window, reserve, keep, now }: CompactAtRun): Promise<CompactAtField | undefined> {
  const threshold = window - (reserve.value ?? 0);
  const pick = await vscode.window.showQuickPick(
    safePickItems([
      {
        field: "reserveTokens" as const,
        label: vscode.l10n.t("$(dashboard) Auto-compact at…"),
        description: vscode.l10n.t("now above {0} tokens ({1})", n(threshold), pct((threshold / window) * 100)),
        detail: vscode.l10n.t('Sets compaction.modelOverrides["{0}"].reserveTokens (window − threshold)', key),
      },
      {
        field: "keepRecentTokens" as const,
        label: vscode.l10n.t("$(history) Keep after compaction…"),
        description: vscode.l10n.t("now {0} tokens", n(keep.value ?? 0)),
        detail: vscode.l10n.t(
          'Sets compaction.modelOverrides["{0}"].keepRecentTokens (what a compaction keeps verbatim)',
          key,
        ),
      },
    ]),
    {
      title: visibleText(vscode.l10n.t("Pi Context: Compact At… — {0}", key)),
      placeHolder: visibleText(now),
      ignoreFocusOut: true,
    },
  );
  return pick?.field;
}

/** The value box, which says what each typed value would set; undefined = Escape. */
function askValue(c: CompactAtRun, field: CompactAtField): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: visibleText(
      vscode.l10n.t(
        "Pi Context: Compact At… — {0} ({1})",
        field === "reserveTokens" ? vscode.l10n.t("when pi auto-compacts") : vscode.l10n.t("what a compaction keeps"),
        c.key,
      ),
    ),
    prompt: inputMessageText(c.now),
    placeHolder: field === "reserveTokens" ? vscode.l10n.t("e.g. 80% or 150000") : vscode.l10n.t("e.g. 10% or 20k"),
    ignoreFocusOut: true,
    validateInput: (t) => {
      if (!t.trim()) return undefined;
      const v = evaluate(c, field, t);
      return "error" in v
        ? v.error
        : { message: inputMessageText(describe(c, v)), severity: vscode.InputBoxValidationSeverity.Info };
    },
  });
}

function evaluate(c: CompactAtRun, field: CompactAtField, text: string): CompactAtValue | { error: string } {
  const input = parseCompactAtInput(text);
  if (!input) return { error: vscode.l10n.t("Type a percentage of the window (80%) or a token count (150000, 150k).") };
  return compactAtValue(field, input, c.window, c.reserve.value ?? 0);
}

function describe(c: CompactAtRun, v: CompactAtValue): string {
  return v.field === "reserveTokens"
    ? vscode.l10n.t(
        "pi will auto-compact above {0} tokens ({1} of {2}): reserveTokens = {3}",
        n(v.threshold),
        pct(v.percent),
        n(c.window),
        n(v.value),
      )
    : vscode.l10n.t(
        "a compaction will keep {0} tokens verbatim: keepRecentTokens = {0} (threshold stays {1})",
        n(v.value),
        n(v.threshold),
      );
}

/** The confirmation: which key of which file changes, and what pi then does. */
async function confirmWrite(c: CompactAtRun, value: CompactAtValue, file: string): Promise<boolean> {
  const ok = await vscode.window.showQuickPick(
    safePickItems([
      {
        go: true,
        label: vscode.l10n.t("$(check) Set {0} = {1}", value.field, n(value.value)),
        description: describe(c, value),
        detail: vscode.l10n.t(
          'In {0}: compaction.modelOverrides["{1}"].{2} — only this key changes. A running pi uses it after /reload or a restart.',
          file,
          c.key,
          value.field,
        ),
      },
      { go: false, label: vscode.l10n.t("$(close) Cancel"), detail: vscode.l10n.t("Nothing is written.") },
    ]),
    {
      title: visibleText(vscode.l10n.t("Pi Context: Compact At… — {0}", c.key)),
      placeHolder: visibleText(c.now),
      ignoreFocusOut: true,
    },
  );
  return ok?.go === true;
}

/** Write the one key, then say whether pi's rules now resolve it (a project override wins over a global one). */
function writeOverride(
  c: CompactAtRun,
  value: CompactAtValue,
  file: string,
  before: string | undefined,
): CompactAtOutcome {
  const { services, current, key } = c;
  const field = value.field;
  try {
    writeCompactionOverride(file, before, key, field, value.value);
  } catch (error) {
    if (error instanceof SettingsChangedError || error instanceof SettingsEditError) return refuse(error.message);
    services.log.error(`compact at: ${(error as Error).stack ?? error}`);
    return refuse(vscode.l10n.t("could not write {0}: {1}. Nothing was written.", file, (error as Error).message));
  }
  services.log.info(`compact at: ${file}: compaction.modelOverrides["${key}"].${field} = ${value.value}`);
  const resolved = resolveSettings({
    agentDir: current.agentDir,
    ...(current.analysis.settings.cwd ? { cwd: current.analysis.settings.cwd } : {}),
    modelKey: key,
    projectSettings: services.config().projectSettings,
  });
  const effective = resolved.compaction[field];
  if (effective.value !== value.value)
    void notify.warn(
      vscode.l10n.t(
        "wrote {0} = {1} to {2}, but {3} in {4} wins ({5}).",
        field,
        n(value.value),
        file,
        effective.key,
        effective.file ?? vscode.l10n.t("another settings file"),
        n(effective.value ?? 0),
      ),
    );
  else void notify.info(vscode.l10n.t("{0}. A running pi uses it after /reload or a restart.", describe(c, value)));
  void services.sessions.refresh().catch(() => undefined);
  return { kind: "written", file, key, field, value: value.value, threshold: value.threshold };
}
