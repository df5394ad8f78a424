/**
 * The composition root: builds every service of {@link Services} first, then registers each VS Code
 * surface with them (one line each). No logic lives here, and no file I/O happens on this path:
 * session discovery, the first look for the user's pi and the live bridge's, the gauge's and the
 * welcome keys' first state start after `activate()` returns.
 */

import * as vscode from "vscode";
import * as l10n from "@vscode/l10n";
import { AccessService } from "./access/service";
import { CommandTable, surfaceActions, treeService } from "./commands";
import { registerCompaction } from "./compaction/command";
import { registerCompactUpToHere } from "./compaction/upToHere";
import { registerCompactAt } from "./compaction/compactAt";
import { readConfig } from "./config";
import { registerHealth, type HealthSurface } from "./health/register";
import { createLiveBridge, registerLiveBridge, type LiveBridgeService } from "./liveBridge/service";
import { registerPanel } from "./panel/controller";
import type { BaseServices, Services } from "./services";
import { registerSessionCommands } from "./sessions/commands";
import { registerForkCommands } from "./sessions/fork";
import { registerResumeCommand } from "./sessions/resume";
import { PiSessionSource } from "./sessions/source";
import { PRODUCT_NAME } from "./shared/format";
import { registerStatusBar, type StatusBarGauge } from "./statusBar/gauge";
import { registerSummarizers } from "./summarizers/select";
import { registerSessionTree, type SessionTreeView } from "./tree/register";
import { registerTrim, type TrimApi } from "./trim/register";
import { UserActivityClock } from "./ui/activity";
import type { Prompter } from "./ui/prompter";
import { registerSummaryDocuments } from "./ui/summaryDocuments";
import { registerWelcomeContext, type WelcomeState } from "./ui/welcome";
import { createUserPi } from "./userPi/service";

/** What `activate()` returns (`vscode.extensions.getExtension(…).exports`); used by the integration tests. */
export interface PiContextApi {
  services: Services;
  /** The status-bar gauge (what it shows: `statusBar.snapshot()`). */
  statusBar: StatusBarGauge;
  /** The "Pi Session" tree view (provider, TreeView, reveal). */
  sessionTree: SessionTreeView;
  /** The live bridge service behind `services.liveBridge` (its counters and problems, for tests). */
  liveBridge: LiveBridgeService;
  /** Context surgery ("Pi Context: Trim Context…"): the questions it asked, for tests. */
  trim: TrimApi;
  /** "Pi Context: Check Session Health" and the log of findings. */
  health: HealthSurface;
  /** The context keys of the views' welcome content (ui/welcome.ts). */
  welcome: () => WelcomeState;
  /** Every command id of the command table (the integration tests compare it with package.json). */
  commands: string[];
  /** Fork and clone: the questions they asked (pi's /fork message pick), for tests. */
  fork: { prompts: Prompter };
}

/** Extension entry point: services first, then the surfaces. */
export function activate(context: vscode.ExtensionContext): PiContextApi {
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  // the view models' strings (`@vscode/l10n`, shared with the CLI) use VS Code's bundle for its language
  if (vscode.l10n.bundle) l10n.config({ contents: vscode.l10n.bundle });
  const log = vscode.window.createOutputChannel(PRODUCT_NAME, { log: true });
  context.subscriptions.push(log);
  const commands = new CommandTable();
  commands.add({ "piContext.showLog": () => log.show() });

  const config = () => readConfig();
  const pi = createUserPi({
    log,
    config,
    userSettingsFile: vscode.Uri.joinPath(context.globalStorageUri, "..", "..", "settings.json").fsPath,
  });
  const sessions = new PiSessionSource({
    log,
    config,
    pi,
    cacheFile: vscode.Uri.joinPath(context.globalStorageUri, "session-catalog.jsonl").fsPath,
  });
  context.subscriptions.push(pi, sessions);
  const base: BaseServices = { context, log, sessions, config, pi, commands };
  const liveBridge = createLiveBridge(base);
  const summarizers = registerSummarizers(base);
  const services: Services = {
    ...base,
    summarizers,
    liveBridge,
    access: new AccessService(base, liveBridge, summarizers),
    actions: surfaceActions(commands),
    tree: treeService(commands),
    activity: new UserActivityClock(),
  };

  // The surfaces: one registration line each (they push their disposables to context.subscriptions).
  registerSummaryDocuments(services);
  registerSessionCommands(services);
  const fork = registerForkCommands(services);
  registerResumeCommand(services);
  registerLiveBridge(services, liveBridge);
  const statusBar = registerStatusBar(services);
  registerPanel(services);
  registerCompactUpToHere(services, registerCompaction(services));
  registerCompactAt(services);
  const sessionTree = registerSessionTree(services);
  const trim = registerTrim(services);
  const health = registerHealth(services);
  const welcome = registerWelcomeContext(services);
  // every surface added its commands: registered with VS Code in one place
  commands.register(context);

  pi.start();
  sessions.start(() => liveBridge.announcedSessions());
  // `npm run bench:ui` reads this line (issue 17: activate() ≤ 20 ms).
  // (CPU time beside it: a wall time well above it is the process waiting for a core, not this work)
  const cpu = process.cpuUsage(cpuAtStart);
  log.info(
    `${PRODUCT_NAME} activated in ${(performance.now() - started).toFixed(1)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms)`,
  );
  return { services, statusBar, sessionTree, liveBridge, trim, health, welcome, fork, commands: commands.ids() };
}

export function deactivate(): void {}
