/**
 * `services.pi`: the user's pi, found by files first, then via the login shell's PATH, pi's managed
 * install and `npm root -g`. Nothing of it is executed here (only `node --version` when pi summarizes).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import * as vscode from "vscode";
import { fileStamp } from "../core/read/stamp";
import { locatePi, piOfProcess, type PiLocation } from "../core/pi/locate";
import { nodeForPi, type PiRuntime } from "../core/pi/node";
import { loginShellPath, npmGlobalRoot } from "../core/pi/shellPath";
import { piReport, userPiOf, type UserPi } from "../core/pi/userPi";
import type { PiContextConfig } from "../config";
import type { UserPiService } from "../services";
import { piPathHint } from "../viewModel/sourceText";

/** Options of {@link UserPiSource}. */
export interface UserPiSourceOptions {
  log: vscode.LogOutputChannel;
  config: () => PiContextConfig;
  env?: NodeJS.ProcessEnv;
  /** Ask the login shell for its PATH (default true; tests turn it off). */
  loginShell?: boolean;
  /** Read only in a remote window, where VS Code ignores machine settings in it. */
  userSettingsFile?: string;
  /** The window is remote (default: `vscode.env.remoteName` is set). */
  remote?: boolean;
}

function stamp(file: string): string {
  return fileStamp([file]);
}

/** The extension's {@link UserPiService}. */
export class UserPiSource implements UserPiService, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<UserPi>();
  readonly onDidChange = this.emitter.event;
  private readonly log: vscode.LogOutputChannel;
  private readonly config: () => PiContextConfig;
  private readonly env: NodeJS.ProcessEnv;
  private readonly askShell: boolean;
  private readonly disposables: vscode.Disposable[] = [];
  /** The pi found so far; undefined until the first look (on first use, or just after `start()`). */
  private found: UserPi | undefined;
  private packageStamp = "";
  private shellPath: string | undefined;
  private npmRoot: string | undefined;
  private lookups: Promise<UserPi> | undefined;
  /** `refresh(true)` asked: the next lookup asks the login shell again, not its cached answer. */
  private askShellAgain = false;
  /** {@link forProcess}'s answers (a pid's program does not change while it runs). */
  private readonly byPid = new Map<number, UserPi | undefined>();
  private readonly userSettingsFile: string | undefined;
  private userSettings: { stamp: string; value: unknown } = { stamp: "", value: undefined };

  constructor(options: UserPiSourceOptions) {
    this.log = options.log;
    this.config = options.config;
    this.env = options.env ?? process.env;
    this.askShell = options.loginShell ?? process.env.PI_CONTEXT_NO_LOGIN_SHELL === undefined;
    this.userSettingsFile =
      (options.remote ?? vscode.env.remoteName !== undefined) ? options.userSettingsFile : undefined;
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("piContext.pi.path")) void this.refresh();
      }),
    );
  }

  /** Start the asynchronous lookups (login shell PATH, npm root -g). Returns immediately. */
  start(): void {
    void this.refresh();
  }

  /** The first look by files happens on first use, so constructing the service does no I/O. */
  private get value(): UserPi {
    return this.found ?? this.firstLook();
  }

  private firstLook(): UserPi {
    const first = this.locate();
    this.found = first;
    // found at once: say which pi the numbers follow; a pi found later, or none, is logged by the lookups
    const report = piReport(first);
    if (first.install || report.settingProblem || report.settingIgnored) this.logReport(report);
    return first;
  }

  get current(): UserPi {
    const install = this.value.install;
    // an update in place (npm i -g, pi update) changes package.json: describe it again; an edit of
    // the User settings file is no configuration change in a remote window (VS Code ignores the value)
    if (
      (install && stamp(path.join(install.packageDir, "package.json")) !== this.packageStamp) ||
      (this.userSettingsFile && stamp(this.userSettingsFile) !== this.userSettings.stamp)
    )
      this.update(this.locate());
    return this.value;
  }

  private locate(): UserPi {
    const location: PiLocation = locatePi({
      setting: this.config().piPath,
      env: this.env,
      ...(this.shellPath !== undefined ? { loginShellPath: this.shellPath } : {}),
      ...(this.npmRoot !== undefined ? { npmRoot: this.npmRoot } : {}),
    });
    const pi = userPiOf(location);
    this.packageStamp = pi.install ? stamp(path.join(pi.install.packageDir, "package.json")) : "";
    const ignored = this.ignoredUserSetting();
    if (ignored) pi.settingIgnored = ignored;
    return pi;
  }

  /** A `piContext.pi.path` in User settings that this remote window ignores (`machine-overridable`). */
  private ignoredUserSetting(): string | undefined {
    const file = this.userSettingsFile;
    if (!file) return undefined;
    const now = stamp(file);
    if (now !== this.userSettings.stamp) {
      let value: unknown;
      try {
        const settings = parseJsonc(fs.readFileSync(file, "utf8"), [], { allowTrailingComma: true }) as unknown;
        if (settings && typeof settings === "object")
          value = (settings as Record<string, unknown>)["piContext.pi.path"];
      } catch {
        value = undefined; // unreadable: VS Code reports its own settings file's problems
      }
      this.userSettings = { stamp: now, value };
    }
    const value = this.userSettings.value;
    if (typeof value !== "string" || value.trim() === "" || value.trim() === this.config().piPath) return undefined;
    return vscode.l10n.t(
      'piContext.pi.path "{0}" in your User settings ({1}) is ignored in this remote window: VS Code applies this machine setting only from the Remote settings or a workspace\'s settings. Move it to the Remote settings ("Preferences: Open Remote Settings (JSON)").',
      value.trim(),
      file,
    );
  }

  private update(next: UserPi): void {
    const before = JSON.stringify(piReport(this.value));
    this.found = next;
    const report = piReport(next);
    if (JSON.stringify(report) === before) return;
    this.logReport(report);
    this.emitter.fire(next);
  }

  /** The log line of the pi the numbers follow (and a warning for a `piContext.pi.path` that points nowhere). */
  private logReport(report: ReturnType<typeof piReport>): void {
    this.log.info(
      `pi: ${report.version ? `pi ${report.version} — ${report.sourceText}` : report.sourceText}; windows from ${report.catalog.name}${report.catalog.problem ? ` (${report.catalog.problem})` : ""}${report.note ? `; ${report.note}` : ""}`,
    );
    if (report.settingProblem) this.log.warn(`pi: ${report.settingProblem}`);
    if (report.settingIgnored) this.log.warn(`pi: ${report.settingIgnored}`);
  }

  /** `again`: also ask the login shell and npm once more; otherwise their first answers are kept. */
  refresh(again = false): Promise<UserPi> {
    if (again && !this.lookups) {
      this.shellPath = undefined;
      this.npmRoot = undefined;
      this.askShellAgain = true; // past the process-wide cache of the shell's answer (shellPath.ts)
    }
    if (this.lookups) return this.lookups;
    const run = this.lookUp();
    this.lookups = run;
    // cleared after the run settles (a run without an await must not leave a settled promise behind)
    void run.finally(() => {
      if (this.lookups === run) this.lookups = undefined;
    });
    return run;
  }

  /** One lookup: by files now, then the login shell's PATH and npm root -g while nothing is found. */
  private async lookUp(): Promise<UserPi> {
    // after activate() has returned (the first look by files may be a few ms of `stat`s)
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.found) this.update(this.locate());
    else this.firstLook();
    if (!this.value.install && this.askShell && this.shellPath === undefined) {
      const started = Date.now();
      const refresh = this.askShellAgain;
      this.askShellAgain = false;
      this.shellPath = (await loginShellPath({ env: this.env, refresh })) ?? "";
      this.log.info(`pi: the login shell's PATH (${Date.now() - started} ms): ${this.shellPath || "not available"}`);
      this.update(this.locate());
    }
    if (!this.value.install && this.npmRoot === undefined) {
      this.npmRoot = (await npmGlobalRoot(this.shellPath || this.env.PATH, this.env)) ?? "";
      if (this.npmRoot) this.update(this.locate());
    }
    if (!this.value.install)
      this.log.info(`pi: none found (${this.value.tried.map((t) => `${t.where}: ${t.result}`).join("; ")})`);
    return this.value;
  }

  forProcess(pid: number): UserPi | undefined {
    if (this.byPid.has(pid)) return this.byPid.get(pid);
    const install = piOfProcess(pid);
    const pi = install
      ? userPiOf({
          pi: install,
          tried: [{ where: vscode.l10n.t("the running pi (pid {0})", pid), result: `pi ${install.version}` }],
        })
      : undefined;
    if (this.byPid.size > 64) this.byPid.clear(); // pids are few; a long session sees many come and go
    this.byPid.set(pid, pi);
    if (pi) this.log.info(`pi: the running pi (pid ${pid}) is pi ${install!.version} at ${install!.packageDir}`);
    return pi;
  }

  async runtime(): Promise<PiRuntime> {
    await this.lookups;
    const install = this.current.install;
    if (!install)
      throw new Error(
        vscode.l10n.t(
          "no pi found (looked at {0}). Install pi, or point at it: {1}.",
          this.value.tried.map((t) => t.where).join(", ") || vscode.l10n.t("the PATH"),
          piPathHint(),
        ),
      );
    if (this.askShell && this.shellPath === undefined) this.shellPath = (await loginShellPath({ env: this.env })) ?? "";
    return nodeForPi(install, {
      env: this.env,
      ...(this.shellPath ? { loginShellPath: this.shellPath } : {}),
    });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** Build `services.pi` (its lookups start with {@link UserPiSource.start}). */
export function createUserPi(options: UserPiSourceOptions): UserPiSource {
  return new UserPiSource(options);
}
