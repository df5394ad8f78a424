/**
 * The one route chooser of every session action, extension and CLI alike: a pi with the live bridge
 * has it open → that pi does it (`bridge`) or refuse (never *Anyway* against it); nobody → our file
 * flow (`file`); otherwise refuse with the evidence, *Anyway* (`--force`) when only probable or possible.
 */

import type { Evidence, SessionAccess } from "./access";

export interface SessionAction {
  id:
    | "compact"
    | "compact-up-to-here"
    | "summarize"
    | "switch"
    | "label"
    | "name"
    | "context-edit"
    | "repair"
    | "repair-leaf"
    | "compact-at"
    | "resume"
    | "end-line";
  viaBridge: boolean;
  /** For messages: "compact", "switch branches in", … */
  verb: string;
  /** What to do inside pi instead ("run /compact"); null when pi has no command for it. */
  inPi: string | null;
  summarizes?: boolean;
}

/** English here; surfaces localise through `words.ts`. */
export const ACTIONS = {
  compact: { id: "compact", viaBridge: true, verb: "compact", inPi: "run /compact", summarizes: true },
  compactUpToHere: { id: "compact-up-to-here", viaBridge: true, verb: "compact", inPi: null, summarizes: true },
  /** Context edits with a summary: pi has no command that summarizes part of its context. */
  summarize: { id: "summarize", viaBridge: true, verb: "summarize messages in", inPi: null, summarizes: true },
  switch: { id: "switch", viaBridge: true, verb: "switch branches in", inPi: "use /tree", summarizes: true },
  label: { id: "label", viaBridge: true, verb: "label entries in", inPi: "use /tree" },
  name: { id: "name", viaBridge: true, verb: "name", inPi: "run /name" },
  contextEdit: { id: "context-edit", viaBridge: true, verb: "edit the context of", inPi: null },
  repair: { id: "repair", viaBridge: true, verb: "repair", inPi: null },
  /** pi's bridge cannot move its own leaf for us. */
  repairLeaf: { id: "repair-leaf", viaBridge: false, verb: "repair", inPi: "use /tree" },
  /** Writes nothing itself, but a second pi on a file a pi has open writes past it. */
  resume: { id: "resume", viaBridge: false, verb: "open a second pi on", inPi: null },
  /** pi's own fix of a torn last line: a pi that has the session open did it when it opened it. */
  endLine: { id: "end-line", viaBridge: false, verb: "end the last line of", inPi: null },
} as const satisfies Record<string, SessionAction>;
// Not routed: fork and clone only read the session and write a new file no pi has open.

export type Offer =
  /** Only against probable or possible evidence. */
  | "anyway"
  | "install-bridge"
  /** Installed, but that pi has not loaded it: `/reload` in pi or restart it. */
  | "reload-pi"
  | "show-terminal"
  | "in-pi";

export type Route =
  | { kind: "bridge"; pid: number; access: SessionAccess }
  | { kind: "file"; access: SessionAccess; forced: boolean }
  | { kind: "refuse"; access: SessionAccess; overridable: boolean; offers: Offer[] };

export interface RouteContext {
  force?: boolean;
  /** Undefined: unknown. */
  bridgeInstalled?: boolean | undefined;
  terminalPids?: ReadonlySet<number>;
}

/** The route of `action` on a session with this access (rules in the file comment). */
export function chooseRoute(action: SessionAction, access: SessionAccess, context: RouteContext = {}): Route {
  const top = access.evidence[0];
  if (!top) return { kind: "file", access, forced: false };
  if (top.kind === "bridge") {
    if (action.viaBridge) return { kind: "bridge", pid: top.pid, access };
    return {
      kind: "refuse",
      access,
      overridable: false,
      offers: [...(action.inPi ? (["in-pi"] as const) : []), ...terminalOffer(access.evidence, context)],
    };
  }
  if (context.force) return { kind: "file", access, forced: true };
  const process = access.evidence.some((e) => e.kind === "process");
  const offers: Offer[] = ["anyway"];
  if (action.viaBridge) {
    if (process) offers.push(context.bridgeInstalled === false ? "install-bridge" : "reload-pi");
    else if (context.bridgeInstalled === false) offers.push("install-bridge");
  }
  offers.push(...terminalOffer(access.evidence, context));
  return { kind: "refuse", access, overridable: true, offers };
}

function terminalOffer(evidence: readonly Evidence[], context: RouteContext): Offer[] {
  const pids = context.terminalPids;
  return pids && evidence.some((e) => e.kind !== "recent-write" && pids.has(e.pid)) ? ["show-terminal"] : [];
}
