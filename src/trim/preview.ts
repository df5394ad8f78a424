/**
 * The trim preview as a quick pick, before anything is written: "Trim now" with tokens now → after,
 * then each planned edit (cascades marked, with their reason), the facts of the preview (gauge and
 * auto-compaction after, the prompt-cache effect and its cost, refusals, unchanged items, bytes),
 * and "Cancel". The rows other than the two actions only inform (accepting them keeps the pick open).
 */

import * as vscode from "vscode";
import { formatCount as n } from "../shared/format";
import type { TrimPreviewEdit, TrimPreviewModel } from "../shared/trim";
import { iconLabelText } from "../shared/untrusted";
import type { Prompter } from "../ui/prompter";
import { TRIM_KIND_LABELS } from "../viewModel/trimActions";
import { effectText, trimHeadline, trimPreviewLines, trimVerb } from "../viewModel/trimPreview";

type Row = vscode.QuickPickItem & { action?: "go" | "cancel" };

/** The codicon of an edit's effect. */
export function effectIcon(effect: TrimPreviewEdit["effect"]): string {
  return effect === "omit" ? "trash" : effect === "note" ? "note" : effect === "restore" ? "history" : "edit";
}

/** Options of {@link confirmTrim}. */
export interface ConfirmTrimOptions {
  /** The session in words, for the title. */
  title: string;
  /** The file changed since an earlier preview and this is the new plan. */
  changed?: boolean;
  /** The running pi that applies the edits (`live`), and whether it is answering now. */
  live?: { pi: string; streaming: boolean };
}

/** Ask before writing; resolves true for "Trim now" ("Restore now", "Apply now": worded by what the plan does). */
export async function confirmTrim(
  prompter: Prompter,
  preview: TrimPreviewModel,
  options: ConfirmTrimOptions,
): Promise<boolean> {
  const lines = trimPreviewLines(preview);
  const where = options.live
    ? options.live.streaming
      ? vscode.l10n.t("{0} applies them at its next turn boundary (it is answering now)", options.live.pi)
      : vscode.l10n.t("{0} appends them itself", options.live.pi)
    : vscode.l10n.t("one append to the session file");
  const verb = trimVerb(preview);
  const inPi = options.live ? vscode.l10n.t(" in pi") : "";
  const rows: Row[] = [
    {
      action: "go",
      label:
        verb === "restore"
          ? vscode.l10n.t("$(history) Restore now{0}", inPi)
          : verb === "edit"
            ? vscode.l10n.t("$(check) Apply now{0}", inPi)
            : vscode.l10n.t("$(check) Trim now{0}", inPi),
      description: trimHeadline(preview),
      detail: iconLabelText(`${lines[0]} ${where[0]!.toUpperCase()}${where.slice(1)}.`),
    },
    { label: vscode.l10n.t("What changes"), kind: vscode.QuickPickItemKind.Separator },
    ...preview.edits.map((e): Row => ({
      label: `$(${effectIcon(e.effect)}) ${iconLabelText(e.text || e.targetId)}`,
      description: vscode.l10n.t("{0} · {1} → {2} tokens", effectText(e.effect), n(e.tokensBefore), n(e.tokensAfter)),
      detail: iconLabelText(
        `${TRIM_KIND_LABELS[e.kind]} ${e.targetId}${e.cascade ? ` — ${e.cause}` : ""}${e.note ? vscode.l10n.t(" — note: {0}", e.note) : ""}`,
      ),
    })),
    { label: vscode.l10n.t("Effect"), kind: vscode.QuickPickItemKind.Separator },
    ...lines.slice(1).map((line): Row => ({
      label: `$(info) ${iconLabelText(line.split(/[.:;] /)[0]!)}`,
      detail: iconLabelText(line),
    })),
    { action: "cancel", label: vscode.l10n.t("$(close) Cancel"), detail: vscode.l10n.t("Nothing is written.") },
  ];
  const pick = await prompter.pick(rows, {
    title:
      verb === "restore"
        ? vscode.l10n.t(
            "{0}Restore items in the context of {1}?",
            options.changed ? vscode.l10n.t("The session changed — new preview. ") : "",
            options.title,
          )
        : verb === "edit"
          ? vscode.l10n.t(
              "{0}Edit the context of {1}?",
              options.changed ? vscode.l10n.t("The session changed — new preview. ") : "",
              options.title,
            )
          : vscode.l10n.t(
              "{0}Trim the context of {1}?",
              options.changed ? vscode.l10n.t("The session changed — new preview. ") : "",
              options.title,
            ),
    placeholder: vscode.l10n.t(
      "{0} → {1}{2}",
      preview.failureNow ? vscode.l10n.t("pi has no estimate") : vscode.l10n.t("{0} tokens", n(preview.baselineTokens)),
      preview.failureAfter ? vscode.l10n.t("pi has no estimate") : vscode.l10n.t("{0} tokens", n(preview.tokensAfter)),
      preview.cache ? vscode.l10n.t(" · next request re-sends ≈{0} uncached", n(preview.cache.resentTokens)) : "",
    ),
    keepOpen: (row) => row.action === undefined,
  });
  return pick?.action === "go";
}
