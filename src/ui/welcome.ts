/**
 * Context keys for the views' welcome content (`contributes.viewsWelcome` in package.json): which
 * empty state the Pi Session view is in, and whether the live bridge is installed. VS Code shows
 * the matching welcome text, with command links, when the view has nothing else to show.
 */

import * as vscode from "vscode";
import { afterActivation } from "./afterActivation";
import type { Services } from "../services";

/** `piContext.sessionState`: `starting` (first scan), `noFolder`, `noSession` (none for the folders), `session`. */
export type SessionState = "starting" | "noFolder" | "noSession" | "session";

/** The context keys this module sets (the `when` clauses of `viewsWelcome` use them). */
export const WELCOME_KEYS = {
  sessionState: "piContext.sessionState",
  bridgeInstalled: "piContext.bridgeInstalled",
} as const;

/** The empty state of the current session and discovery (pure). */
export function sessionStateOf(services: Pick<Services, "sessions">): SessionState {
  if (services.sessions.current) return "session";
  const d = services.sessions.discovery;
  if (!d || d.phase === "starting") return "starting";
  return d.workspace ? "noSession" : "noFolder";
}

/** What the welcome keys are now (for tests: `activate()`'s API). */
export interface WelcomeState {
  sessionState: SessionState;
  /** undefined: not known (pi's extensions folder unreadable, a foreign file there). */
  bridgeInstalled: boolean | undefined;
}

/** The Getting Started walkthrough (`contributes.walkthroughs`), as `workbench.action.openWalkthrough` names it. */
export const WALKTHROUGH_ID = "pi-context.pi-context#piContext.gettingStarted";

/**
 * Keep the welcome context keys up to date and register "Pi Context: Get Started" (opens
 * the walkthrough); returns a reader of the values last set.
 */
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
  // the first keys right after activate() returns (reading the installed bridge is file I/O);
  // asked earlier, the state is built on the spot
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
