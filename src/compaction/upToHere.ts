/**
 * "Pi Context: Compact Up to Here…" (`piContext.compactUpToHere(target?)`): pi's compaction with the cut at
 * a chosen entry — everything before it (since the latest compaction) summarized, it and everything
 * after it kept verbatim. From the Pi Session tree's context menu (target = the row), the panel and
 * the palette (no target: a pick of the entries pi can keep from, newest first). The rest is
 * `piContext.compact`'s flow with `keepFrom` (`command.ts`): the route, the checks before any
 * question, the instructions, the preview, the summarizers, the write path.
 */

import * as vscode from "vscode";
import { validCutPoints } from "../core/rules/compaction";
import { buildProjection } from "../core/rules/context";
import { contribution } from "../core/rules/tokens";
import { entryIdOf } from "../core/treeModel/elements";
import type { CompactCommandOutcome, CurrentSession, Services } from "../services";
import { formatTokens } from "../shared/format";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import { safePickItems } from "../ui/prompter";
import { describeRecord, KIND_NAMES } from "../viewModel/treeText";
import { oneLine } from "../viewModel/treeTextLines";
import type { CompactFunction } from "./command";

/** The entries pi can keep from, newest first, with the tokens kept from each (the pick's rows). */
function cutChoices(current: CurrentSession): { id: string; text: string; kept: number }[] {
  const session = current.session;
  const ids = validCutPoints(session).slice(1); // the first one has nothing before it
  const entries = buildProjection(session).entries;
  const at = new Map(entries.map((e, i) => [e.record.id, i]));
  // Σ estimated tokens from each entry to the leaf, measured once from the end
  const keptFrom = new Map<string, number>();
  let sum = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.roles.some((r) => r !== "system")) sum += contribution(e, session).tokens;
    keptFrom.set(e.record.id, sum);
  }
  return ids
    .filter((id) => at.has(id))
    .reverse()
    .map((id) => {
      const record = session.byId.get(id)!;
      const d = describeRecord(record);
      return { id, text: oneLine(`${KIND_NAMES[d.kind]}: ${d.text}`, 100), kept: keptFrom.get(id) ?? 0 };
    });
}

/**
 * Register `piContext.compactUpToHere` on `compact` (the compaction command's function).
 * Resolves with the compaction's {@link CompactCommandOutcome}.
 */
export function registerCompactUpToHere(services: Services, compact: CompactFunction): void {
  const upToHere = async (arg?: unknown, optionsArg?: unknown): Promise<CompactCommandOutcome> => {
    const current = services.sessions.current;
    if (!current) {
      void notify.info(vscode.l10n.t("no pi session to compact."));
      return { kind: "error", errorKind: "no-session", message: vscode.l10n.t("No pi session.") };
    }
    let keepFrom = entryIdOf(arg);
    if (keepFrom === undefined) {
      const choices = cutChoices(current);
      if (choices.length === 0) {
        const message = vscode.l10n.t("Nothing to compact: the context has no earlier entry pi could keep from.");
        void notify.info(message);
        return { kind: "nothing", file: current.file, message };
      }
      const pick = await vscode.window.showQuickPick(
        safePickItems(
          choices.map((c) => ({
            label: iconLabelText(c.text),
            description: vscode.l10n.t("{0} · keeps ≈{1} tokens", c.id, formatTokens(c.kept)),
            id: c.id,
          })),
        ),
        {
          title: vscode.l10n.t("Pi Context: Compact Up to Here — Keep From Which Entry?"),
          placeHolder: vscode.l10n.t(
            "Everything before the entry is summarized; the entry and everything after it stay as they are",
          ),
          matchOnDescription: true,
          ignoreFocusOut: true,
        },
      );
      if (!pick) return { kind: "declined", file: current.file, stage: "session" };
      keepFrom = pick.id;
    }
    const options = optionsArg && typeof optionsArg === "object" ? optionsArg : {};
    return compact(current.file, { ...options, keepFrom });
  };
  services.commands.add({ "piContext.compactUpToHere": upToHere });
}
