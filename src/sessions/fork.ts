/**
 * pi's `/fork` and `/clone` in VS Code (`core/flows/fork.ts`): a user message is forked before it
 * (its text offered to send again), any other entry at it. The source is only read.
 */

import * as vscode from "vscode";
import { NothingToForkError, planFork, writeFork, type ForkResult } from "../core/flows/fork";
import { SessionFile } from "../core/read/session";
import { getPath } from "../core/rules/tree";
import { entryIdOf } from "../core/treeModel/elements";
import type { Services } from "../services";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";
import { Prompter } from "../ui/prompter";
import { setVirtualDocument, SUMMARY_SCHEME } from "../ui/summaryDocuments";
import { describeRecord, entryWords } from "../viewModel/treeText";
import { resumeInPi } from "./resume";

/** What the fork and clone commands resolve with. */
export type ForkCommandOutcome =
  | ({ kind: "forked" } & ForkResult)
  /** pi writes no file here (before the first message, or no message on the path); nothing was written. */
  | { kind: "nothing"; file: string; message: string; selectedText?: string }
  | { kind: "declined" | "no-session"; file?: string }
  | { kind: "error"; file?: string; errorKind: string; message: string };

/** Options of {@link forkFromVsCode}. */
export interface ForkCommandOptions {
  /** No toast (tests, scripts): the outcome says everything. */
  quiet?: boolean;
}

let messageCounter = 0;

/** A message's text as a read-only document (session text shown as text). */
async function showMessage(text: string): Promise<void> {
  const uri = vscode.Uri.from({
    scheme: SUMMARY_SCHEME,
    path: `/preview/message-${++messageCounter}/${vscode.l10n.t("Message to send again")}.md`,
  });
  setVirtualDocument(uri, text);
  await vscode.window.showTextDocument(uri, { preview: true });
}

/** Offer the fork's next steps: Resume in pi, and the message to send again. */
function offerNextSteps(services: Services, result: ForkResult, text: string): void {
  const resume = vscode.l10n.t("Resume in pi");
  const copy = vscode.l10n.t("Copy Message");
  const show = vscode.l10n.t("Show Message");
  const message = result.selectedText;
  const buttons = message !== undefined ? [resume, copy, show] : [resume];
  void notify.info(text, ...buttons).then(async (choice) => {
    if (choice === resume) await resumeInPi(services, result.file);
    else if (choice === copy && message !== undefined) await vscode.env.clipboard.writeText(message);
    else if (choice === show && message !== undefined) await showMessage(message);
  });
}

/** `entryId` `null`: the file's leaf. */
export async function forkFromVsCode(
  services: Services,
  file: string,
  target: { entryId: string | null; clone: boolean },
  options: ForkCommandOptions = {},
): Promise<ForkCommandOutcome> {
  const { entryId, clone } = target;
  const what = clone ? "clone" : "fork";
  try {
    const { plan, result } = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: vscode.l10n.t("Forking the session…") },
      async () => {
        const planned = await planFork(file, entryId, clone ? { position: "at" } : {});
        return { plan: planned, result: await writeFork(planned) };
      },
    );
    services.log.info(
      `${what} ${file} ${result.position} ${result.entryId} → ${result.file} (${result.pathCount} entries, ${result.labelCount} labels)`,
    );
    // listed at once (a scan now, not at the next file event), then shown
    await services.sessions.refresh();
    await services.sessions.pin(result.file);
    if (!options.quiet) {
      const source = services.sessions.current?.file === result.file ? services.sessions.current.label : undefined;
      const label = source ?? result.file.split(/[\\/]/).pop() ?? result.file;
      const at = entryWords(plan.session.byId.get(result.entryId));
      const entries = result.pathCount;
      offerNextSteps(
        services,
        result,
        clone
          ? vscode.l10n.t("cloned “{0}” into a new session of {1} entries; it is shown now.", label, entries)
          : result.position === "before"
            ? vscode.l10n.t(
                "forked “{0}” before {1} into a new session of {2} entries; it is shown now. The message was not sent: send it again in pi to continue.",
                label,
                at,
                entries,
              )
            : vscode.l10n.t(
                "forked “{0}” at {1} into a new session of {2} entries; it is shown now.",
                label,
                at,
                entries,
              ),
      );
    }
    return { kind: "forked", ...result };
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`${what} ${file}${entryId ? ` at ${entryId}` : ""}: ${message}`);
    if (error instanceof NothingToForkError) {
      const text = error.selectedText;
      if (!options.quiet) {
        const copy = vscode.l10n.t("Copy Message");
        void notify
          .info(message, ...(text !== undefined ? [copy] : []))
          .then((choice) => (choice === copy && text !== undefined ? vscode.env.clipboard.writeText(text) : undefined));
      }
      return { kind: "nothing", file, message, ...(text !== undefined ? { selectedText: text } : {}) };
    }
    if (!options.quiet) void notify.error(vscode.l10n.t("could not fork the session: {0}", message));
    return { kind: "error", file, errorKind: notify.errorKindOf(error), message };
  }
}

/** pi's `/fork` selector: the session's user messages with text, newest first; undefined on Escape. */
async function pickUserMessage(prompter: Prompter, file: string): Promise<string | undefined> {
  const session = await SessionFile.open(file);
  const onBranch = new Set(getPath(session, session.leafId).path.map((r) => r.id));
  const items = session.records
    .filter((r) => r.type === "message" && r.role === "user" && session.byId.get(r.id) === r)
    .map((r) => ({ r, text: describeRecord(r).text.trim() }))
    .filter(({ text }) => text !== "")
    .reverse()
    .map(({ r, text }) => ({
      label: iconLabelText(text.length > 120 ? `${text.slice(0, 119)}…` : text),
      description: onBranch.has(r.id) ? `${r.id} · ${vscode.l10n.t("on the current branch")}` : r.id,
      id: r.id,
    }));
  if (items.length === 0) {
    void notify.info(vscode.l10n.t("the session has no user message to fork from."));
    return undefined;
  }
  const pick = await prompter.pick(items, {
    title: vscode.l10n.t("Pi Context: Fork Session — from which message?"),
    placeholder: vscode.l10n.t("The new session ends before the message; its text is offered to send again"),
  });
  return pick?.id;
}

/** Register the fork and clone commands (see the file comment). */
export function registerForkCommands(services: Services): { prompts: Prompter } {
  const prompter = new Prompter();
  const currentFile = (fileArg: unknown): string | undefined =>
    typeof fileArg === "string" ? fileArg : services.sessions.current?.file;
  const noSession = (): ForkCommandOutcome => {
    void notify.info(vscode.l10n.t("no pi session to fork: pick one with Pi Context: Select Session… first."));
    return { kind: "no-session" };
  };
  const fork = async (entryArg: unknown, fileArg: unknown, options: unknown): Promise<ForkCommandOutcome> => {
    const file = currentFile(fileArg);
    if (!file) return noSession();
    const entryId = entryIdOf(entryArg) ?? (await pickUserMessage(prompter, file));
    if (!entryId) return { kind: "declined", file };
    return forkFromVsCode(services, file, { entryId, clone: false }, (options ?? {}) as ForkCommandOptions);
  };
  const clone = async (fileArg: unknown, options: unknown): Promise<ForkCommandOutcome> => {
    const file = currentFile(fileArg);
    if (!file) return noSession();
    // pi's /clone takes pi's leaf: a running pi's in-memory leaf can differ from the file's last line
    const live = await services.liveBridge.livePosition(file).catch(() => undefined);
    const leaf = live?.leafId ?? null;
    const entryId = leaf !== null && (await SessionFile.open(file)).byId.has(leaf) ? leaf : null;
    return forkFromVsCode(services, file, { entryId, clone: true }, (options ?? {}) as ForkCommandOptions);
  };
  services.commands.add({
    "piContext.tree.forkHere": (entry?: unknown, options?: unknown) => fork(entry, undefined, options),
    "piContext.forkSession": (entry?: unknown, file?: unknown, options?: unknown) => fork(entry, file, options),
    "piContext.cloneSession": (file?: unknown, options?: unknown) => clone(file, options),
  });
  return { prompts: prompter };
}
