/**
 * Context surgery in VS Code: remove, shorten and restore single items of pi's context. Commands
 * (all resolve with a {@link TrimCommandOutcome}):
 *
 * - `piContext.trim` ("Pi Context: Trim Context…"): the trim list as a multi-select quick pick
 *   (`picker.ts`), what to do, the note for one item, the preview, the write (`command.ts`);
 * - `piContext.trim.remove(target)`, `piContext.trim.replaceWithNote(target, note?)`,
 *   `piContext.trim.restore(target)`: the Pi Session tree's context menu (target = a tree element
 *   or an entry id);
 * - `piContext.trim.apply(items, options?)`: a request (`TrimRequestItem[]`) from the panel, scripts
 *   and tests; `options` as {@link TrimApplyOptions};
 * - `piContext.trim.undo(options?)` ("Pi Context: Undo Last Context Edit", `undo.ts`): the last batch
 *   of context edits taken back; the trim's result notification offers it for what it wrote.
 * - `piContext.summarizeSpan`, `piContext.trim.restoreSpan`: a span replaced by one summary and
 *   back (`summarize.ts`; its questions are recorded by the same prompter).
 */

import * as vscode from "vscode";
import { entryIdOf } from "../core/treeModel/elements";
import type { Services, TrimCommandOutcome } from "../services";
import { TRIM_CHOICES, type TrimRequestItem } from "../shared/trim";
import * as notify from "../ui/notify";
import { Prompter, type OpenPrompt, type PromptRecord } from "../ui/prompter";
import { entryWordsOf } from "../viewModel/treeText";
import { buildTrimList } from "../viewModel/trimList";
import { TrimCommand, type TrimApplyOptions } from "./command";
import { askNote, PICK_LIMIT, pickChoice, pickItems, requestOf, suggestedNote } from "./picker";
import { UndoCommand, type UndoCommandOptions } from "./undo";
import { registerSummarize } from "./summarize";

/** What {@link registerTrim} returns (exposed to the integration tests through `activate()`). */
export interface TrimApi {
  /** Questions asked so far, in order. */
  readonly prompts: readonly PromptRecord[];
  /** The question on screen, if any. */
  currentPrompt(): OpenPrompt | undefined;
}

/** A request from an untrusted caller (a command argument): well-formed items only. */
function requestItems(arg: unknown): TrimRequestItem[] {
  if (!Array.isArray(arg)) return [];
  return arg.flatMap((x): TrimRequestItem[] => {
    const item = x as Partial<TrimRequestItem> | null;
    if (!item || typeof item.entryId !== "string" || !TRIM_CHOICES.includes(item.choice as never)) return [];
    return [
      {
        entryId: item.entryId,
        choice: item.choice!,
        ...(typeof item.note === "string" ? { note: item.note } : {}),
      },
    ];
  });
}

/** Options of `piContext.trim.undo` from an untrusted caller: well-formed fields only. */
function undoOptions(arg: unknown): UndoCommandOptions {
  if (!arg || typeof arg !== "object") return {};
  const o = arg as Record<string, unknown>;
  const out: UndoCommandOptions = {};
  if (typeof o.file === "string") out.file = o.file;
  if (Array.isArray(o.editIds) && o.editIds.every((id) => typeof id === "string")) out.editIds = o.editIds as string[];
  if (o.skipPreview === true) out.skipPreview = true;
  if (o.quiet === true) out.quiet = true;
  return out;
}

/** Register the trim commands. */
export function registerTrim(services: Services): TrimApi {
  const prompter = new Prompter();
  const undo = new UndoCommand(services, prompter);
  const command = new TrimCommand(services, prompter, (file, editIds) => undo.run({ file, editIds }));
  const declined = (stage: "pick" | "empty" | "action" | "note"): TrimCommandOutcome => ({
    kind: "declined",
    ...(services.sessions.current ? { file: services.sessions.current.file } : {}),
    stage,
  });
  const noSession = (): TrimCommandOutcome => {
    void notify.info(vscode.l10n.t("no pi session to trim."));
    return { kind: "error", errorKind: "no-session", message: vscode.l10n.t("No pi session.") };
  };

  /** The route before any question: a refusal ends here (shown with its ways out). */
  const refused = async (file: string, force: boolean, retry: () => void): Promise<TrimCommandOutcome | undefined> => {
    const route = await command.route(file, force, retry);
    return route.kind === "refuse" ? { kind: "error", file, errorKind: "live", message: route.message } : undefined;
  };

  const trim = async (force = false): Promise<TrimCommandOutcome> => {
    const current = services.sessions.current;
    if (!current) return noSession();
    const refusal = await refused(current.file, force === true, () => void trim(true));
    if (refusal) return refusal;
    const list = buildTrimList(current.session, { limit: PICK_LIMIT });
    // the session's label, as every surface names it (pi's rule: its name, else its first message)
    const picked = await pickItems(prompter, list, `"${current.label}"`);
    if (!picked) return declined("pick");
    if (picked.suggestions.length === 0 && picked.items.length === 0) {
      void notify.info(
        vscode.l10n.t(
          "nothing was picked: tick suggestions or items with Space, then press Enter. Nothing was written.",
        ),
      );
      return declined("empty");
    }
    let choice = undefined;
    let note: string | undefined;
    if (picked.items.length > 0) {
      choice = await pickChoice(prompter, picked.items);
      if (!choice) return declined("action");
      if (choice === "note" && picked.items.length === 1) {
        const item = picked.items[0]!;
        const what = item.tool ?? entryWordsOf(item.entryId, current.session);
        note = await askNote(prompter, suggestedNote(current.session, item.entryId), what);
        if (note === undefined) return declined("note");
      }
    }
    return command.apply(requestOf(picked.suggestions, picked.items, choice, note), {
      file: current.file,
      force: force === true,
    });
  };

  const one = (choice: TrimRequestItem["choice"]) => async (arg?: unknown, noteArg?: unknown, force?: unknown) => {
    const current = services.sessions.current;
    const id = entryIdOf(arg);
    if (!current) return noSession();
    if (!id)
      return {
        kind: "nothing",
        file: current.file,
        message: vscode.l10n.t("No entry was given."),
      } as TrimCommandOutcome;
    let note = typeof noteArg === "string" ? noteArg : undefined;
    const refusal = await refused(current.file, force === true, () => void one(choice)(arg, noteArg, true));
    if (refusal) return refusal;
    if (choice === "note" && note === undefined) {
      note = await askNote(prompter, suggestedNote(current.session, id), entryWordsOf(id, current.session));
      if (note === undefined) return declined("note");
    }
    return command.apply([{ entryId: id, choice, ...(note !== undefined ? { note } : {}) }], {
      file: current.file,
      force: force === true,
    });
  };

  const commands: Record<string, (...args: unknown[]) => unknown> = {
    "piContext.trim": () => trim(false),
    "piContext.trim.remove": one("remove"),
    "piContext.trim.replaceWithNote": one("note"),
    "piContext.trim.restore": one("restore"),
    "piContext.trim.apply": (arg?: unknown, optionsArg?: unknown) =>
      command.apply(
        requestItems(arg),
        optionsArg && typeof optionsArg === "object" ? (optionsArg as TrimApplyOptions) : {},
      ),
    "piContext.trim.undo": (optionsArg?: unknown) => undo.run(undoOptions(optionsArg)),
  };
  services.commands.add(commands);
  registerSummarize(services, command, prompter);
  return { prompts: prompter.log, currentPrompt: () => prompter.current };
}
