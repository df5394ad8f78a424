/** The composition root: services first, then each surface. No file I/O on this path. */

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

/** What `activate()` returns; used by the integration tests. */
export interface PiContextApi {
  services: Services;
  statusBar: StatusBarGauge;
  sessionTree: SessionTreeView;
  liveBridge: LiveBridgeService;
  trim: TrimApi;
  health: HealthSurface;
  welcome: () => WelcomeState;
  commands: string[];
  fork: { prompts: Prompter };
}

export function activate(context: vscode.ExtensionContext): PiContextApi {
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
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
  commands.register(context);

  pi.start();
  sessions.start(() => liveBridge.announcedSessions());
  // `npm run bench:ui` reads this line.
  const cpu = process.cpuUsage(cpuAtStart);
  log.info(
    `${PRODUCT_NAME} activated in ${(performance.now() - started).toFixed(1)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms)`,
  );
  return { services, statusBar, sessionTree, liveBridge, trim, health, welcome, fork, commands: commands.ids() };
}

export function deactivate(): void {}
