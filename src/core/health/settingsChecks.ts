/**
 * Settings that make pi misbehave for this session's model, from what the gauge already knows
 * (`rules/inspect.ts`: window, `reserveTokens`, `keepRecentTokens`, `compaction.enabled`, settings
 * problems; `rules/analyze.ts`: models.json errors).
 *
 * pi 1.6.0: `shouldCompact` is `contextTokens > contextWindow − reserveTokens` (strict), checked
 * after every answer; `prepareCompaction` keeps the newest messages worth `keepRecentTokens`.
 */

import type { InspectResult } from "../rules/inspect";
import type { HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

/** What the settings checks read. */
export type SettingsInput = Pick<
  InspectResult,
  "contextWindow" | "reserveTokens" | "keepRecentTokens" | "compactionEnabled" | "settingsProblems" | "model"
> & {
  /** `Analysis.modelsError`. */
  modelsError?: string | undefined;
  /** The model pi resumes with (branch or settings default), when the path names none. */
  selection?: { provider: string; modelId: string } | null;
};

const n = (v: number) => v.toLocaleString("en-US");

function settingsFinding(
  f: Pick<HealthFinding, "code" | "severity" | "message"> & { file?: string | undefined },
): HealthFinding {
  return {
    code: f.code,
    severity: f.severity,
    entryId: null,
    relatedIds: [],
    message: f.message,
    source: f.code === "models-json" ? "models" : "settings",
    ...(f.file ? { file: f.file } : {}),
    repair: null,
  };
}

/** All settings findings. */
export function settingsFindings(input: SettingsInput): HealthFinding[] {
  const out: HealthFinding[] = [];
  const model = input.model ?? input.selection ?? null;
  const name = model ? `${model.provider}/${model.modelId}` : undefined;
  const window = input.contextWindow.value && input.contextWindow.value > 0 ? input.contextWindow.value : undefined;
  const reserve = input.reserveTokens.value;
  const keep = input.keepRecentTokens.value;
  const enabled = input.compactionEnabled.value;
  const where = (s: { file?: string; source: string }) => (s.file ? l10n.t(" in {0}", s.file) : ` (${s.source})`);
  if (!window)
    out.push(
      settingsFinding({
        code: "unknown-window",
        severity: name ? "warning" : "info",
        message:
          name && input.modelsError
            ? l10n.t(
                "pi-context does not know the context window of {0}: it is not in pi's model catalog snapshot or models-store.json, and models.json is invalid, so pi ignores the whole file (see the models.json problem) and neither pi nor pi-context uses its models. Fix models.json; until then the gauge shows tokens without a percentage and the compaction threshold is unknown.",
                name,
              )
            : name
              ? l10n.t(
                  "pi-context does not know the context window of {0} (not in pi's model catalog snapshot, models-store.json or models.json): the gauge shows tokens without a percentage and the compaction threshold is unknown. pi uses the window of its own model registry; if pi knows this model (for example from an extension), add it with its contextWindow to models.json in pi's agent dir, which both read.",
                  name,
                )
              : l10n.t(
                  "The session names no model and pi's settings have no defaultProvider/defaultModel, so there is no context window to measure against.",
                ),
      }),
    );
  if (enabled && window && reserve !== null && reserve >= window)
    out.push(
      settingsFinding({
        code: "reserve-exceeds-window",
        severity: "error",
        file: input.reserveTokens.file,
        message: l10n.t(
          "compaction.reserveTokens is {0}{1}, not below the context window of {2} ({3}): pi's threshold (window − reserveTokens) is {4}, so pi compacts after every answer. Fix: set compaction.reserveTokens below {3} (pi's default is 16,384), or a per-model value under compaction.modelOverrides.",
          n(reserve),
          where(input.reserveTokens),
          name ?? l10n.t("the model"),
          n(window),
          n(window - reserve),
        ),
      }),
    );
  else if (enabled && window && reserve !== null && keep !== null && keep >= window - reserve)
    out.push(
      settingsFinding({
        code: "keep-exceeds-threshold",
        severity: "warning",
        file: input.keepRecentTokens.file,
        message: l10n.t(
          "compaction.keepRecentTokens is {0}{1}, at least pi's threshold of {2} (window {3} − reserveTokens {4}): what a compaction keeps is already over the threshold, so pi compacts again after the next answer. Fix: set keepRecentTokens well below {2} (pi's default is 20,000).",
          n(keep),
          where(input.keepRecentTokens),
          n(window - reserve),
          n(window),
          n(reserve),
        ),
      }),
    );
  // pi does not validate compaction.enabled: it tests the value for truth (`enabled && tokens > threshold`)
  const raw: unknown = input.compactionEnabled.value;
  if (raw !== undefined && typeof raw !== "boolean")
    out.push(
      settingsFinding({
        code: "setting-not-boolean",
        severity: "warning",
        file: input.compactionEnabled.file,
        message: l10n.t(
          "compaction.enabled is {0}{1}, not true or false: pi tests it for truth, so auto-compaction is {2} (pi turns it off only for false, 0 or an empty string). Fix: write true or false without quotes.",
          JSON.stringify(raw) ?? String(raw),
          where(input.compactionEnabled),
          raw ? l10n.t("on") : l10n.t("off"),
        ),
      }),
    );
  for (const s of input.settingsProblems)
    out.push(
      settingsFinding({
        code: "invalid-setting",
        severity: "warning",
        file: s.file,
        message: s.key
          ? l10n.t(
              "{0}. pi 1.6.0 throws this error when it reads the setting (its compaction check after each answer fails, so there is no auto-compaction threshold until it is fixed). Fix the value in {1}.",
              s.message.replace(/[.\s]+$/, ""),
              s.file,
            )
          : l10n.t(
              "{0}. pi reports this problem too; pi-context uses pi's defaults for what the file would set.",
              s.message.replace(/[.\s]+$/, ""),
            ),
      }),
    );
  if (input.modelsError)
    out.push(
      settingsFinding({
        code: "models-json",
        severity: "warning",
        message: l10n.t(
          "{0}. pi reports the same problem and ignores the file's models, so their context windows are unknown.",
          input.modelsError.replace(/[.\s]+$/, ""),
        ),
      }),
    );
  return out;
}
