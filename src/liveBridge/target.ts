/**
 * What the live bridge service (`service.ts`) and its routes (`routes.ts`) share: a connected
 * live pi, what looking one up for a session file finds, the counters, and how a live pi is named
 * in messages.
 */

import type { BridgeError, BridgeConnection } from "./client";
import type { Announcement } from "../bridge/protocol";
import * as l10n from "@vscode/l10n";

/** A live bridge connected for a session. */
export interface LiveTarget {
  announcement: Announcement;
  connection: BridgeConnection;
}

/** What `LiveBridgeService.resolve` found for a session file (`none`: no announcement, or only stale ones). */
export type LiveResolution =
  | { kind: "live"; target: LiveTarget }
  | { kind: "none"; stale: number }
  | { kind: "problem"; error: BridgeError; announcement: Announcement };

/** Counters for tests and the log. */
export interface LiveBridgeStats {
  connects: number;
  compactions: number;
  switches: number;
  labels: number;
  contextEdits: number;
  statePushes: number;
}

/** A live pi in messages: `pi <version> (pid <pid>)`. */
export function describePi(a: Announcement): string {
  return l10n.t("pi {0} (pid {1})", a.piVersion, a.pid);
}
