/**
 * "Resume in pi": a terminal running `pi --session <file>` with the pi `services.pi` found. Never
 * while a pi has the session open unless the user says *Anyway*: two pis on one file branch off.
 */

import * as vscode from "vscode";
import { ACTIONS } from "../core/access/route";
import { readHeader } from "../core/read/header";
import { sessionLabel } from "../core/rules/sessionLabel";
import {
  commandLine,
  resumeArgv,
  resumeCwd,
  shellKindOf,
  UnquotableArgumentError,
  type ShellKind,
} from "../core/pi/resume";
import type { Services } from "../services";
import { iconLabelText } from "../shared/untrusted";
import * as notify from "../ui/notify";

/** What `piContext.resumeInPi` resolves with. */
export type ResumeOutcome =
  | {
      kind: "opened";
      file: string;
      /** The terminal's name (`pi: <session label>`). */
      terminalName: string;
      /** The terminal's folder: the session's working directory, when it exists. */
      cwd: string | undefined;
      argv: string[];
      /** What was typed into the terminal. */
      commandLine: string;
      shell: ShellKind;
    }
  | { kind: "no-session" }
  | { kind: "refused" | "no-pi" | "error"; file: string; message: string };

/** The terminal's name: `pi: ` + the session's label, as every surface names it (at most 40 characters). */
async function terminalName(services: Services, file: string): Promise<string> {
  const info = await services.sessions.sessionInfo(file).catch(() => undefined);
  const label = info ? sessionLabel(info, 40) : (file.split(/[\\/]/).pop() ?? file);
  return `pi: ${iconLabelText(label)}`;
}

/** `force`: the user chose *Anyway* after a refusal. */
export async function resumeInPi(services: Services, fileArg?: string, force = false): Promise<ResumeOutcome> {
  const file = fileArg ?? services.sessions.current?.file;
  if (!file) {
    void notify.info(vscode.l10n.t("no pi session to resume: pick one with Pi Context: Select Session… first."));
    return { kind: "no-session" };
  }
  const route = await services.access.route(file, ACTIONS.resume, {
    force,
    retry: () => void resumeInPi(services, file, true),
  });
  if (route.kind === "refuse") return { kind: "refused", file, message: route.message };
  const install = services.pi.current.install;
  if (!install) {
    const message = vscode.l10n.t(
      "no pi found to resume the session with (looked at the PATH, the login shell's PATH, pi's managed install and npm's global packages). Point the setting piContext.pi.path at your pi.",
    );
    void notify.warn(message, vscode.l10n.t("Open Settings")).then((choice) => {
      if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "piContext.pi.path");
    });
    return { kind: "no-pi", file, message };
  }
  let node: string | undefined;
  let argv = resumeArgv(install, file);
  if (!argv) {
    try {
      node = (await services.pi.runtime()).node;
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(vscode.l10n.t("could not resume the session in pi: {0}", message));
      return { kind: "error", file, message };
    }
    argv = resumeArgv(install, file, node)!;
  }
  const shell = shellKindOf(vscode.env.shell);
  let line: string;
  try {
    line = commandLine(argv, shell);
  } catch (error) {
    if (!(error instanceof UnquotableArgumentError)) throw error;
    const message = vscode.l10n.t("could not type the command into a terminal safely: {0}", error.message);
    void notify.error(message);
    return { kind: "error", file, message };
  }
  const cwd = resumeCwd((await readHeader(file)).cwd);
  const name = await terminalName(services, file);
  const terminal = vscode.window.createTerminal({
    name,
    ...(cwd ? { cwd } : {}),
    iconPath: new vscode.ThemeIcon("terminal"),
  });
  terminal.show();
  terminal.sendText(line, true);
  services.log.info(`resume in pi: ${line}${cwd ? ` (in ${cwd})` : ""}`);
  // the numbers show the session the user works on now (pinned, as a pick in Select Session)
  await services.sessions.pin(file);
  return { kind: "opened", file, terminalName: name, cwd, argv, commandLine: line, shell };
}

/** Register `piContext.resumeInPi [file]`. */
export function registerResumeCommand(services: Services): void {
  services.commands.add({
    "piContext.resumeInPi": (file?: unknown) => resumeInPi(services, typeof file === "string" ? file : undefined),
  });
}
