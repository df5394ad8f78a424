/** Which session is shown: Select Session…, Follow Latest, Switch Live Session, Name Session…, Refresh. */

import * as os from "node:os";
import * as vscode from "vscode";
import { appendSessionName, EmptySessionNameError } from "../core/flows/name";
import { ACTIONS } from "../core/access/route";
import { LiveSessionError } from "../core/access/words";
import type { SessionAccess } from "../core/access/access";
import type { SessionInfo } from "../core/read/sessionInfo";
import { normalizeSessionName } from "../core/rules/sessionLabel";
import type { Services } from "../services";
import * as notify from "../ui/notify";
import { iconLabelText } from "../shared/untrusted";
import { followRow, PICKER_FIRST_ROWS, pickRowDetail, projectFolderLabel, sessionPickRows } from "./picker";
import { resumeInPi } from "./resume";

interface SessionItem extends vscode.QuickPickItem {
  file?: string;
  follow?: boolean;
}

/** What `piContext.nameSession` resolves with. */
export type NameCommandOutcome =
  | { kind: "named"; file: string; name: string; entryId: string | null; via: "bridge" | "file" }
  | { kind: "declined" | "no-session"; file?: string }
  | { kind: "error"; file: string; message: string };

/** While the listing fills in, the picker's rows are rebuilt at most this often (ms). */
const PICKER_UPDATE_MS = 750;

/** Register the session commands. */
export function registerSessionCommands(services: Services): void {
  const { sessions, log } = services;
  services.commands.add({
    "piContext.selectSession": () => selectSession(services),
    "piContext.followLatest": async () => {
      await sessions.followLatest();
      const c = sessions.current;
      log.info(c ? `following the latest session: ${c.file}` : "following the latest session (none yet)");
    },
    // also look for pi again, asking the login shell and npm once more (pi may have been installed since)
    "piContext.refresh": async () => {
      await services.pi.refresh(true).catch(() => undefined);
      await sessions.refresh();
    },
    "piContext.switchLiveSession": (file?: unknown) => switchLive(services, file),
    "piContext.nameSession": (file?: unknown, name?: unknown) =>
      nameSession(services, typeof file === "string" ? file : undefined, typeof name === "string" ? name : undefined),
  });
}

/** Follow another live session of the current folder: the given one, the only other one, or a pick. */
async function switchLive(services: Services, file: unknown): Promise<string | undefined> {
  const current = services.sessions.current;
  if (!current) return undefined;
  let target = typeof file === "string" ? file : undefined;
  if (!target) {
    const others = current.liveSessions;
    if (others.length === 0) {
      void notify.info(vscode.l10n.t("no other live session in this folder."));
      return undefined;
    }
    if (others.length === 1) target = others[0]!.file;
    else
      target = (
        await vscode.window.showQuickPick(
          others.map((o) => ({ label: iconLabelText(o.label), description: iconLabelText(o.file), file: o.file })),
          { title: vscode.l10n.t("Pi Context: Switch to Another Live Session"), ignoreFocusOut: true },
        )
      )?.file;
  }
  if (!target) return undefined;
  await services.sessions.show(target);
  return services.sessions.current?.file;
}

/** Like pi's `/name`: through the live bridge, else a `session_info` entry, as the route chooser says. */
async function nameSession(
  services: Services,
  fileArg?: string,
  nameArg?: string,
  force = false,
): Promise<NameCommandOutcome> {
  const current = services.sessions.current;
  const file = fileArg ?? current?.file;
  if (!file) {
    void notify.info(vscode.l10n.t("no pi session to name: open the folder pi runs in, or pick a session first."));
    return { kind: "no-session" };
  }
  const retry = (name?: string) => void nameSession(services, file, name ?? nameArg, true);
  let route = await services.access.route(file, ACTIONS.name, { force, retry: () => retry() });
  if (route.kind === "refuse") return { kind: "error", file, message: route.message };
  const name =
    nameArg ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t("Pi Context: Name Session"),
      prompt: vscode.l10n.t("pi shows the name in /resume and its footer (what pi's /name writes)."),
      value: current?.file === file ? (current.session.name ?? "") : "",
      validateInput: (v) => (normalizeSessionName(v) ? undefined : vscode.l10n.t("Session name cannot be empty")),
      ignoreFocusOut: true,
    }));
  if (name === undefined) return { kind: "declined", file };
  try {
    if (route.kind === "bridge") {
      const live = await services.liveBridge.routeName(file, name);
      if (live) {
        await services.sessions.refresh();
        return live.result
          ? { kind: "named", file, name: live.result.name ?? "", entryId: live.result.entryId, via: "bridge" }
          : { kind: "error", file, message: vscode.l10n.t("the running pi could not name the session") };
      }
      route = await services.access.route(file, ACTIONS.name, { force, retry: () => retry(name) }); // pi went away
      if (route.kind !== "file") return { kind: "error", file, message: "message" in route ? route.message : "" };
    }
    const r = await appendSessionName(file, name, {
      ...services.access.flowOptions(route.kind === "file" && route.forced),
      surface: "vscode",
    });
    services.log.info(`named ${file} "${r.entry.name}" (entry ${r.entry.id})`);
    await services.sessions.refresh();
    void notify.info(vscode.l10n.t("named the session “{0}” — pi shows it in /resume.", String(r.entry.name)));
    return { kind: "named", file, name: r.entry.name ?? "", entryId: r.entry.id, via: "file" };
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`name ${file}: ${message}`);
    if (error instanceof LiveSessionError) services.access.showRefusal(error, file, () => retry(name));
    else if (error instanceof EmptySessionNameError) void notify.warn(message);
    else void notify.error(vscode.l10n.t("could not name the session: {0}", message));
    return { kind: "error", file, message };
  }
}

/** Show the QuickPick of the workspace's sessions; pin the one picked (or follow the latest). */
async function selectSession(services: Services): Promise<void> {
  const { sessions } = services;
  const quickPick = vscode.window.createQuickPick<SessionItem>();
  quickPick.title = vscode.l10n.t("Pi Context: Select Session");
  quickPick.placeholder = vscode.l10n.t("Filter by name, first message, model or date");
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  quickPick.busy = true;
  // like every pick of ours: a webview that takes the focus as it loads (the panel just opened)
  // must not close it while the sessions fill in; Escape does
  quickPick.ignoreFocusOut = true;
  quickPick.show();
  const shownAt = Date.now();
  let firstRowsAt: number | undefined;
  const current = sessions.current;
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === "file")
    .map((f) => ({ name: f.name, path: f.uri.fsPath }));
  const home = os.homedir();
  // each session's row: open it in the user's pi (`pi --session`) in a terminal
  const resumeButton: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon("terminal"),
    tooltip: vscode.l10n.t("Resume in pi"),
  };
  let shownActive = false;
  // who has which session open (the access model), asked with the first rows and again at the end
  let live: ReadonlyMap<string, SessionAccess> = new Map();
  let hidden = false;
  const render = (list: SessionInfo[], done: boolean, limit?: number): void => {
    const rows = sessionPickRows(list, {
      ...(current ? { currentFile: current.file } : {}),
      nowMs: Date.now(),
      locale: vscode.env.language,
      folderName: (s) => projectFolderLabel(s.cwd, folders, home),
      ...(limit !== undefined ? { limit } : {}),
      // with no folder open the listing is every folder's: pi's listAll order
      scope: folders.length === 0 ? "all" : "folder",
      live,
    });
    const items: SessionItem[] = [{ ...followRow(!current?.pinned, folders.length > 0), follow: true } as SessionItem];
    if (rows.length > 0)
      items.push({
        label: folders.length === 0 ? vscode.l10n.t("all pi sessions (no folder open)") : vscode.l10n.t("sessions"),
        kind: vscode.QuickPickItemKind.Separator,
      });
    for (const row of rows)
      items.push({
        label: `${row.current ? (current?.pinned ? "$(pinned) " : "$(check) ") : ""}${row.live ? "$(pulse) " : ""}${iconLabelText(row.label)}`,
        description: iconLabelText(row.description),
        // the session's texts escaped ($(name) in them stays text); the folder's icon is ours
        detail: pickRowDetail(row, { text: iconLabelText, folderIcon: "$(folder) " }),
        file: row.file,
        buttons: [resumeButton],
      });
    if (rows.length === 0 && done) {
      const dirs = sessions.discovery?.searchedDirs ?? [];
      items.push({
        label: vscode.l10n.t("$(info) No pi sessions found"),
        detail: dirs.length ? iconLabelText(vscode.l10n.t("Looked in {0}", dirs.join(", "))) : undefined,
        alwaysShow: true,
      } as SessionItem);
    }
    const active = quickPick.activeItems[0]?.file;
    quickPick.items = items;
    // keep the row the user moved to; at first, the current session
    const keep = items.find((i) => i.file !== undefined && i.file === (shownActive ? active : current?.file));
    if (keep) {
      quickPick.activeItems = [keep];
      shownActive = true;
    }
    if (rows.length > 0) firstRowsAt ??= Date.now();
    if (done)
      services.log.info(
        `Select Session: ${list.length} sessions listed in ${Date.now() - shownAt} ms (first rows after ${(firstRowsAt ?? Date.now()) - shownAt} ms)`,
      );
  };
  // the first screen of rows at once (then every row right after), the final list at once; in
  // between at most every PICKER_UPDATE_MS (building thousands of rows and handing them to the
  // workbench is not free)
  let lastRender = 0;
  let trailing: NodeJS.Timeout | undefined;
  let latest: SessionInfo[] = [];
  let latestDone = false;
  let liveAsked: "no" | "first" | "done" = "no";
  /** Ask who has the sessions open; the rows show it when the answer comes. */
  const askLive = (list: SessionInfo[]): void => {
    void services.access
      .live(list)
      .then((answer) => {
        live = answer;
        if (!hidden && answer.size > 0) render(latest, latestDone);
      })
      .catch((error: unknown) =>
        services.log.warn(`Select Session: who has sessions open: ${(error as Error).message}`),
      );
  };
  /** Render the latest list (not done) after `wait` ms. */
  const renderLater = (wait: number): void => {
    trailing = setTimeout(() => {
      trailing = undefined;
      lastRender = Date.now();
      render(latest, false);
    }, wait);
  };
  const update = (list: SessionInfo[], done: boolean): void => {
    latest = list;
    latestDone = done;
    if (done ? liveAsked !== "done" : liveAsked === "no" && list.length > 0) {
      liveAsked = done ? "done" : "first";
      askLive(list);
    }
    if (trailing) clearTimeout(trailing);
    trailing = undefined;
    if (lastRender === 0 && !done && list.length > PICKER_FIRST_ROWS) {
      lastRender = Date.now();
      render(list, false, PICKER_FIRST_ROWS);
      renderLater(0);
      return;
    }
    const wait = lastRender === 0 || done ? 0 : PICKER_UPDATE_MS - (Date.now() - lastRender);
    if (wait <= 0) {
      lastRender = Date.now();
      render(list, done);
    } else renderLater(wait);
  };
  // the follow row at once (the sessions fill in below it while the picker is busy)
  render([], false);
  const controller = new AbortController();
  quickPick.onDidHide(() => {
    hidden = true;
    controller.abort();
    if (trailing) clearTimeout(trailing);
  });
  void sessions
    .listSessions({ onProgress: update, signal: controller.signal })
    .catch((error: unknown) => {
      if ((error as Error).name === "AbortError") return;
      services.log.error(`listing sessions failed: ${(error as Error).message}`);
      quickPick.items = [
        { label: vscode.l10n.t("$(error) Could not list sessions"), detail: iconLabelText((error as Error).message) },
      ];
    })
    .finally(() => (quickPick.busy = false));
  const picked = await new Promise<SessionItem | undefined>((resolve) => {
    quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
    quickPick.onDidHide(() => resolve(undefined));
    quickPick.onDidTriggerItemButton((e) => {
      const file = e.item.file;
      resolve(undefined);
      quickPick.hide();
      if (file) void resumeInPi(services, file);
    });
  });
  quickPick.dispose();
  if (!picked) return;
  if (picked.follow) await sessions.followLatest();
  else if (picked.file) await sessions.pin(picked.file);
}
