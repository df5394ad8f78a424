/**
 * The CLI's side of the one route chooser (`core/access/route.ts`): who has the session open (the
 * live bridges' announcements, the process table, the file's age — our own last write excluded),
 * then what to do: the running pi does it through its live bridge, our file flow, or a refusal that
 * names the evidence (exit 1; `--force` goes ahead where the evidence is only probable or possible).
 */

import type { Announcement } from "../bridge/protocol";
import type { SessionAccess } from "../core/access/access";
import { sessionAccess } from "../core/access/gather";
import { chooseRoute, type Route, type SessionAction } from "../core/access/route";
import { describeAccess } from "../core/access/words";
import { canonicalPath } from "../core/access/gather";
import { connectBridge, type BridgeConnection } from "../liveBridge/client";
import { announcedPis, liveAnnouncements } from "../liveBridge/announced";
import { BRIDGE_VERSION } from "../bridge/protocol";
import { bridgeInstallPath } from "../liveBridge/installFile";
import * as fs from "node:fs";

/** What {@link cliRoute} decided. */
export interface CliRoute {
  route: Route;
  access: SessionAccess;
  /** The announcement of the pi that does it (route `bridge`). */
  announcement?: Announcement;
  /** The refusal's text (route `refuse`). */
  refusal?: string;
  /** The options every write flow takes, so its last check before the append agrees with this route. */
  flowOptions: {
    guardSeconds: number;
    force: boolean;
    announced: () => ReturnType<typeof announcedPis>;
  };
}

/**
 * Who has `file` open and the route of `action` on it.
 * @param options `agentDir` (pi's live folder), `guardSeconds` (`--guard-seconds`), `force` (`--force`).
 */
export async function cliRoute(
  file: string,
  action: SessionAction,
  options: { agentDir: string; guardSeconds: number; force: boolean },
): Promise<CliRoute> {
  const announced = () => announcedPis(liveAnnouncements(options.agentDir));
  const access = await sessionAccess(file, { guardSeconds: options.guardSeconds, announced });
  // pi loads `*.js` from `<agentDir>/extensions/`: without the file, /reload would not help
  const bridgeInstalled = fs.existsSync(bridgeInstallPath(options.agentDir));
  const route = chooseRoute(action, access, { force: options.force, bridgeInstalled });
  const flowOptions = { guardSeconds: options.guardSeconds, force: options.force, announced };
  if (route.kind === "refuse")
    return { route, access, flowOptions, refusal: describeAccess(access, action, route.offers, "cli") };
  if (route.kind === "bridge") {
    const target = canonicalPath(file);
    const announcement = liveAnnouncements(options.agentDir).find(
      (a) => a.pid === route.pid && canonicalPath(a.sessionFile) === target,
    );
    if (announcement) return { route, access, flowOptions, announcement };
  }
  return { route, access, flowOptions };
}

/** Connect to the bridge of a `bridge` route (the CLI names itself in pi's `/pi-context-bridge`). */
export function connectRoute(announcement: Announcement): Promise<BridgeConnection> {
  return connectBridge(announcement, { timeoutMs: 5000, clientName: `pi-context-cli/${BRIDGE_VERSION}` });
}

/** `pi 1.6.0 (process 1234)`: the pi that does the work, for the CLI's messages. */
export function piName(a: Pick<Announcement, "piVersion" | "pid">): string {
  return `pi ${a.piVersion} (process ${a.pid})`;
}
