/** The access model in words: refusals name their evidence and the route's ways out, for VS Code or the CLI. */

import * as l10n from "@vscode/l10n";
import { describeProcess } from "../proc/table";
import { blocksWrite, type Evidence, type SessionAccess } from "./access";
import { sessionAccess, type AccessOptions } from "./gather";
import { chooseRoute, type Offer, type SessionAction } from "./route";

export type MessageSurface = "vscode" | "cli";

export type SessionAccessOptions = Pick<AccessOptions, "guardSeconds" | "procRoot" | "processes" | "announced"> & {
  /** Only certain evidence (a pi with the bridge) stops the write. */
  force?: boolean;
};

/** Who has the session a flow read open (`sessionAccess` with the header's `cwd` and `id`). */
export function accessOfSession(
  session: { filePath: string; cwd?: string | undefined; sessionId?: string | undefined },
  options: SessionAccessOptions,
): Promise<SessionAccess> {
  return sessionAccess(session.filePath, {
    guardSeconds: options.guardSeconds,
    header: { cwd: session.cwd, id: session.sessionId },
    ...(options.procRoot !== undefined ? { procRoot: options.procRoot } : {}),
    ...(options.processes ? { processes: options.processes } : {}),
    ...(options.announced ? { announced: options.announced } : {}),
  });
}

/** A write refused because someone may have the session open; nothing was written. */
export class LiveSessionError extends Error {
  readonly access: SessionAccess;
  /** Names the *Anyway* button ("Compact Anyway"). */
  readonly action: SessionAction["id"];
  /** Only probable or possible evidence: *Anyway* / `--force` may go ahead. */
  readonly overridable: boolean;
  readonly offers: Offer[];
  constructor(message: string, access: SessionAccess, offers: Offer[], action: SessionAction["id"]) {
    super(message);
    this.name = "LiveSessionError";
    this.access = access;
    this.action = action;
    this.offers = offers;
    this.overridable = offers.includes("anyway");
  }
}

export interface RefusalOptions {
  surface?: MessageSurface;
  bridgeInstalled?: boolean | undefined;
  terminalPids?: ReadonlySet<number>;
}

/** The refusal as an error carrying `route.ts`'s offers and {@link describeAccess}'s words. */
export function accessRefusal(
  access: SessionAccess,
  action: SessionAction,
  options: RefusalOptions = {},
): LiveSessionError {
  const route = chooseRoute(action, access, {
    bridgeInstalled: options.bridgeInstalled,
    ...(options.terminalPids ? { terminalPids: options.terminalPids } : {}),
  });
  const offers = route.kind === "refuse" ? route.offers : [];
  return new LiveSessionError(
    describeAccess(access, action, offers, options.surface ?? "vscode"),
    access,
    offers,
    action.id,
  );
}

/** The flows' last check before an append. @throws {LiveSessionError} when {@link blocksWrite}. */
export function assertAccess(
  access: SessionAccess,
  action: SessionAction,
  options: { force?: boolean | undefined; surface?: MessageSurface | undefined },
): void {
  if (blocksWrite(access, options.force === true))
    throw accessRefusal(access, action, options.surface ? { surface: options.surface } : {});
}

export function anywayLabel(action: SessionAction["id"]): string {
  switch (action) {
    case "compact":
      return l10n.t("Compact Anyway");
    case "switch":
      return l10n.t("Switch Anyway");
    case "label":
      return l10n.t("Label Anyway");
    case "name":
      return l10n.t("Name Anyway");
    case "context-edit":
      return l10n.t("Edit Anyway");
    default:
      return l10n.t("Repair Anyway");
  }
}

function howText(e: Extract<Evidence, { kind: "process" }>): string {
  switch (e.how) {
    case "session-argument":
      return l10n.t("started with this session");
    case "started-here":
      return l10n.t("it started this session");
    case "written-since-start":
      return l10n.t("it wrote to this session since it started");
    case "in-folder":
      return l10n.t("in the session's folder {0}; which session it has open cannot be told", e.cwd ?? "?");
    case "unknown-cwd":
      return l10n.t("its folder cannot be read on this system");
  }
}

export function evidenceText(e: Evidence, surface: MessageSurface = "vscode"): string {
  if (e.kind === "bridge")
    return l10n
      .t("pi {0} (process {1}) has it open with the live bridge", e.piVersion ?? "", e.pid)
      .replace("pi  (", "pi (");
  if (e.kind === "process")
    return e.strength === "probable"
      ? l10n.t("pi is running on it ({0}, {1})", describeProcess(e), howText(e))
      : l10n.t("a pi is running that may have it open ({0}, {1})", describeProcess(e), howText(e));
  const guard =
    surface === "cli"
      ? "--guard-seconds N sets it, 0 turns it off"
      : l10n.t("setting piContext.liveSession.guardSeconds");
  return l10n.t(
    "the session file was written {0} s ago by another program (less than the {1} s guard; {2})",
    e.ageSeconds.toFixed(0),
    e.guardSeconds,
    guard,
  );
}

/** Why a write is refused, what it would do now, and the ways out, in VS Code's or the CLI's words. */
export function describeAccess(
  access: SessionAccess,
  action: SessionAction,
  offers: readonly Offer[],
  surface: MessageSurface = "vscode",
): string {
  const reasons = access.evidence.map((e) => evidenceText(e, surface)).join("; ");
  const ways: string[] = [];
  const certain = access.strength === "certain";
  if (certain)
    ways.push(
      action.inPi
        ? l10n.t("The running pi cannot do this through its bridge: {0} inside pi, or quit pi first.", action.inPi)
        : l10n.t("The running pi cannot do this through its bridge: quit pi first."),
    );
  else {
    ways.push(
      action.inPi
        ? l10n.t("Quit pi (or {0} inside pi), wait until the session is idle, then try again.", action.inPi)
        : l10n.t("Quit pi, wait until the session is idle, then try again."),
    );
    if (offers.includes("install-bridge"))
      ways.push(
        surface === "cli"
          ? l10n.t(
              "With pi-context's live bridge installed in pi (the VS Code extension installs it), a running pi does this itself.",
            )
          : l10n.t("Install the live bridge so that a running pi does this itself."),
      );
    if (offers.includes("reload-pi"))
      ways.push(
        l10n.t("That pi has not loaded the live bridge: /reload in pi (or start it again) and it does this itself."),
      );
    if (offers.includes("anyway"))
      ways.push(
        surface === "cli"
          ? l10n.t("If you know no pi has this session open, --force goes ahead.")
          : l10n.t('If you know no pi has this session open, "{0}" goes ahead.', anywayLabel(action.id)),
      );
  }
  return l10n.t(
    "Refusing to {0} this session while pi may have it open: {1}. A running pi keeps the session in memory and never re-reads the file, so it would ignore the new entry and its next message would branch off it. {2} Nothing was written.",
    action.verb,
    reasons || l10n.t("no evidence"),
    ways.join(" "),
  );
}

/** The refusal as markdown ("Show Details"); system text (commands, paths) in code spans. */
export function accessRefusalMarkdown(
  error: Pick<LiveSessionError, "access" | "offers" | "message" | "action">,
  file: string,
): string {
  const code = (t: string) => `\`${t.replace(/`/g, "'")}\``;
  const reasons = error.access.evidence.map((e) =>
    e.kind === "recent-write"
      ? l10n.t(
          "- The session file was written {0} s ago by another program — less than the {1} s guard (setting {2}).",
          e.ageSeconds.toFixed(0),
          e.guardSeconds,
          code("piContext.liveSession.guardSeconds"),
        )
      : e.kind === "bridge"
        ? l10n.t("- pi {0} (process {1}) has it open: its live bridge says so.", e.piVersion ?? "", e.pid)
        : l10n.t(
            "- pi process {0} ({1}): {2}",
            e.pid,
            e.strength === "probable" ? l10n.t("probably has it open") : l10n.t("may have it open"),
            `${howText(e)} — ${code(e.command)}`,
          ),
  );
  const ways = [
    l10n.t("- Quit pi, or run the command inside pi (`/compact`, `/tree`, `/name`), then try again."),
    ...(error.offers.includes("install-bridge")
      ? [
          l10n.t(
            '- Install the live bridge ("Pi Context: Install Live Bridge"): a running pi then does it itself, with its own model (pi loads it at its next start or after `/reload`).',
          ),
        ]
      : []),
    ...(error.offers.includes("reload-pi")
      ? [l10n.t("- The live bridge is installed, but that pi has not loaded it: `/reload` in pi (or start it again).")]
      : []),
    ...(error.offers.includes("anyway")
      ? [
          l10n.t(
            '- The evidence is not certain. If you know no pi has this session open, "{0}" goes ahead (once; a pi with the live bridge on the session still stops it).',
            anywayLabel(error.action),
          ),
        ]
      : []),
  ];
  return [
    "# Refused: pi may have this session open",
    "",
    l10n.t("Session file: {0}", code(file)),
    "",
    "## Why",
    "",
    ...reasons,
    "",
    l10n.t(
      "A running pi keeps its session in memory and never re-reads the file: an entry written now would be ignored by it, and its next message would branch off it. Nothing was written.",
    ),
    "",
    "## What you can do",
    "",
    ...ways,
    "",
  ].join("\n");
}
