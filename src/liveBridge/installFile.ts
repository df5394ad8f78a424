/**
 * The live bridge file in pi's extensions folder (no `vscode`; the command is `install.ts`): one
 * marker line `// pi-context-bridge-install {…,"sha256":"<body>"}` + the shipped bundle, so an
 * edited file is recognised. A file without the marker is not ours: never overwritten or removed.
 */

import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { compareVersions } from "../core/pi/versions";
import { BRIDGE_FILE_NAME, BRIDGE_PROTOCOL, BRIDGE_VERSION, PI_VERSION_RANGE } from "../bridge/protocol";
import * as l10n from "@vscode/l10n";

/** Start of the marker line. */
export const MARKER_PREFIX = "// pi-context-bridge-install ";

/** What the marker line records. */
export interface BridgeMarker {
  version: string;
  protocol: number;
  /** The pi versions the bridge was tested with. */
  pi: string;
  /** sha256 (hex) of the text after the marker line. */
  sha256: string;
}

/** State of the installed file compared with the one this extension ships. */
export type BridgeFileState =
  /** No file. */
  | "missing"
  /** Our file, same bundle as shipped. */
  | "current"
  /** Our file from another build of the bridge (older version, or same version, other content). */
  | "outdated"
  /** Our file from a newer bridge version than shipped (a newer pi-context installed it). */
  | "newer"
  /** Our marker, but the text was edited since. */
  | "modified"
  /** A file of that name without our marker: not ours. */
  | "foreign";

/** {@link bridgeStatus} result. */
export interface BridgeFileStatus {
  state: BridgeFileState;
  /** The install path. */
  file: string;
  /** The installed marker, when there is one. */
  installed?: BridgeMarker;
  shipped: BridgeMarker;
}

/** `<agentDir>/extensions/pi-context-bridge.js` (pi auto-discovers `*.js` there). */
export function bridgeInstallPath(agentDir: string): string {
  return path.join(agentDir, "extensions", BRIDGE_FILE_NAME);
}

function sha256(text: string): string {
  return crypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/** The marker of a bundle text as shipped. */
export function shippedMarker(body: string): BridgeMarker {
  return { version: BRIDGE_VERSION, protocol: BRIDGE_PROTOCOL, pi: PI_VERSION_RANGE.text, sha256: sha256(body) };
}

/** The installed file's text: marker line + bundle. */
export function installedText(body: string): string {
  return `${MARKER_PREFIX}${JSON.stringify(shippedMarker(body))}\n${body}`;
}

/** @returns undefined when the first line is not our marker. */
export function parseInstalled(text: string): { marker: BridgeMarker; body: string } | undefined {
  const nl = text.indexOf("\n");
  const first = nl < 0 ? text : text.slice(0, nl);
  if (!first.startsWith(MARKER_PREFIX)) return undefined;
  try {
    const m = JSON.parse(first.slice(MARKER_PREFIX.length)) as Partial<BridgeMarker>;
    if (typeof m.version !== "string" || typeof m.protocol !== "number" || typeof m.sha256 !== "string")
      return undefined;
    return {
      marker: { version: m.version, protocol: m.protocol, pi: typeof m.pi === "string" ? m.pi : "?", sha256: m.sha256 },
      body: nl < 0 ? "" : text.slice(nl + 1),
    };
  } catch {
    return undefined;
  }
}

/** @throws the `fs` error when the file exists but cannot be read. */
export function bridgeStatus(agentDir: string, body: string): BridgeFileStatus {
  const file = bridgeInstallPath(agentDir);
  const shipped = shippedMarker(body);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "missing", file, shipped };
    throw error;
  }
  const parsed = parseInstalled(text);
  if (!parsed) return { state: "foreign", file, shipped };
  const installed = parsed.marker;
  if (sha256(parsed.body) !== installed.sha256) return { state: "modified", file, installed, shipped };
  if (installed.sha256 === shipped.sha256) return { state: "current", file, installed, shipped };
  if (compareVersions(installed.version, shipped.version) > 0) return { state: "newer", file, installed, shipped };
  return { state: "outdated", file, installed, shipped };
}

/** Thrown when the file at the install path is not ours. */
export class ForeignBridgeFileError extends Error {
  constructor(readonly file: string) {
    super(
      l10n.t(
        "{0} exists and was not installed by pi-context (no pi-context marker on its first line); leaving it alone.",
        file,
      ),
    );
    this.name = "ForeignBridgeFileError";
  }
}

/**
 * Atomic (temp + rename); overwrites only our own file. @returns the status before and the file.
 * @throws {ForeignBridgeFileError} when a file of that name is not ours.
 */
export function installBridgeFile(agentDir: string, body: string): { file: string; before: BridgeFileStatus } {
  const before = bridgeStatus(agentDir, body);
  if (before.state === "foreign") throw new ForeignBridgeFileError(before.file);
  fs.mkdirSync(path.dirname(before.file), { recursive: true });
  const tmp = `${before.file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(tmp, installedText(body), { mode: 0o644, flag: "wx" });
  try {
    fs.renameSync(tmp, before.file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  return { file: before.file, before };
}

/** Never anything else. @throws {ForeignBridgeFileError} when the file is not ours. */
export function removeBridgeFile(agentDir: string, body: string): { removed: boolean; before: BridgeFileStatus } {
  const before = bridgeStatus(agentDir, body);
  if (before.state === "missing") return { removed: false, before };
  if (before.state === "foreign") throw new ForeignBridgeFileError(before.file);
  fs.rmSync(before.file);
  return { removed: true, before };
}
