/** Context keys for the views' welcome content (`contributes.viewsWelcome` in package.json). */

import * as vscode from "vscode";
import { afterActivation } from "./afterActivation";
import type { Services } from "../services";

export type SessionState = "starting" | "noFolder" | "noSession" | "session";

export const WELCOME_KEYS = {
  sessionState: "piContext.sessionState",
  bridgeInstalled: "piContext.bridgeInstalled",
} as const;

export function sessionStateOf(services: Pick<Services, "sessions">): SessionState {
  if (services.sessions.current) return "session";
  const d = services.sessions.discovery;
  if (!d || d.phase === "starting") return "starting";
  return d.workspace ? "noSession" : "noFolder";
}

export interface WelcomeState {
  sessionState: SessionState;
  /** undefined: not known (pi's extensions folder unreadable, a foreign file there). */
  bridgeInstalled: boolean | undefined;
}

export const WALKTHROUGH_ID = "pi-context.pi-context#piContext.gettingStarted";

export function registerWelcomeContext(services: Services): () => WelcomeState {
  let last: WelcomeState | undefined;
  const update = () => {
    const next: WelcomeState = {
      sessionState: sessionStateOf(services),
      bridgeInstalled: services.liveBridge.bridgeInstalled(),
    };
    if (last?.sessionState !== next.sessionState)
      void vscode.commands.executeCommand("setContext", WELCOME_KEYS.sessionState, next.sessionState);
    if (last?.bridgeInstalled !== next.bridgeInstalled || !last)
      void vscode.commands.executeCommand("setContext", WELCOME_KEYS.bridgeInstalled, next.bridgeInstalled);
    last = next;
  };
  services.commands.add({
    "piContext.getStarted": () =>
      vscode.commands.executeCommand("workbench.action.openWalkthrough", WALKTHROUGH_ID, false),
  });
  services.context.subscriptions.push(services.sessions.onDidChange(update), services.liveBridge.onDidChange(update));
  // after activate() returns: reading the installed bridge is file I/O
  services.context.subscriptions.push(
    afterActivation(() => {
      if (!last) update();
    }),
  );
  return () => {
    if (!last) update();
    return last!;
  };
}
