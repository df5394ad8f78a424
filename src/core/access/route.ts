/**
 * The one route chooser of every action on a session (compact, switch, label, name, context edits,
 * repair, and every action to come), in the extension and the CLI alike:
 * - a pi has the session open with its live bridge → that pi does it (`bridge`), when the bridge
 *   can; else refuse (never *Anyway* against a bridge-confirmed pi);
 * - nobody has it open → our file flow (`file`; summaries by the user's pi or the configured
 *   summarizer);
 * - otherwise → refuse before anything is asked, naming the evidence and offering the ways out;
 *   *Anyway* (`--force`) where the evidence is only probable or possible.
 * Surfaces never decide the route themselves; they act on what {@link chooseRoute} returns.
 */

import type { Evidence, SessionAccess } from "./access";

/** An action on a session, as the route chooser needs to know it. */
export interface SessionAction {
  /** Stable name (logs, tests). */
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
  /** True when the running pi can do it through its live bridge. */
  viaBridge: boolean;
  /** The refused action as a verb phrase ("compact", "switch branches in", …), for messages. */
  verb: string;
  /** What to do inside pi instead ("run /compact"); null when pi has no command for it. */
  inPi: string | null;
  /** True when our file flow may write a summary (then the route says who writes it). */
  summarizes?: boolean;
}

/** The actions (their words are English here; surfaces localise through `words.ts`). */
export const ACTIONS = {
  compact: { id: "compact", viaBridge: true, verb: "compact", inPi: "run /compact", summarizes: true },
  /** "Compact up to here": the running pi cuts where asked (bridge 1.3.0+); pi has no command for it. */
  compactUpToHere: { id: "compact-up-to-here", viaBridge: true, verb: "compact", inPi: null, summarizes: true },
  /**
   * "Summarize these messages": context edits with a summary (by the configured summarizer: pi has
   * no command that summarizes part of its context); a running pi appends them through its bridge.
   */
  summarize: { id: "summarize", viaBridge: true, verb: "summarize messages in", inPi: null, summarizes: true },
  switch: { id: "switch", viaBridge: true, verb: "switch branches in", inPi: "use /tree", summarizes: true },
  label: { id: "label", viaBridge: true, verb: "label entries in", inPi: "use /tree" },
  name: { id: "name", viaBridge: true, verb: "name", inPi: "run /name" },
  contextEdit: { id: "context-edit", viaBridge: true, verb: "edit the context of", inPi: null },
  repair: { id: "repair", viaBridge: true, verb: "repair", inPi: null },
  /** A repair that also moves pi's leaf: pi's bridge cannot move its own leaf for us. */
  repairLeaf: { id: "repair-leaf", viaBridge: false, verb: "repair", inPi: "use /tree" },
  /** "Resume in pi": writes nothing itself, but a second pi on a file a pi has open writes past it. */
  resume: { id: "resume", viaBridge: false, verb: "open a second pi on", inPi: null },
  /** pi's own fix of a torn last line (one `\n`): a pi that has the session open did it when it opened it. */
  endLine: { id: "end-line", viaBridge: false, verb: "end the last line of", inPi: null },
} as const satisfies Record<string, SessionAction>;
// Not routed: Fork Session Here and Clone Session only read the session (reading is always
// allowed) and write a new file no pi has open (`flows/fork.ts`).

/** A way out of a refusal. */
export type Offer =
  /** Go ahead once (only against probable or possible evidence). */
  | "anyway"
  /** Install the live bridge (not installed). */
  | "install-bridge"
  /** The bridge is installed but that pi has not loaded it: `/reload` in pi or start it again. */
  | "reload-pi"
  /** Show the terminal the pi runs in. */
  | "show-terminal"
  /** Do it inside pi (`inPi`). */
  | "in-pi";

/** What to do. */
export type Route =
  | { kind: "bridge"; pid: number; access: SessionAccess }
  | { kind: "file"; access: SessionAccess; forced: boolean }
  | { kind: "refuse"; access: SessionAccess; overridable: boolean; offers: Offer[] };

/** What the chooser needs besides the access. */
export interface RouteContext {
  /** The user went ahead anyway (*Anyway*, `--force`): probable and possible evidence do not stop it. */
  force?: boolean;
  /** Our bridge file is installed (false: offer to install it; undefined: unknown). */
  bridgeInstalled?: boolean | undefined;
  /** pids of pis that run in a terminal the surface can show. */
  terminalPids?: ReadonlySet<number>;
}

/**
 * The route of `action` on a session whose access is `access` (see the file comment).
 */
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
  // the bridge is a way out only for what a running pi can do through it
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
