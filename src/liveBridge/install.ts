/**
 * "Pi Context: Install Live Bridge" / "Pi Context: Remove Live Bridge" and the update offer: the modal questions,
 * the messages and the log around the file side in `installFile.ts` (the marker, the status of
 * `<agentDir>/extensions/pi-context-bridge.js` against the shipped bundle).
 */

import * as fs from "node:fs";
import * as vscode from "vscode";
import { liveDir } from "../bridge/announce";
import { fileStamp } from "../core/read/stamp";
import { BRIDGE_VERSION, PI_VERSION_RANGE } from "../bridge/protocol";
import type { BaseServices } from "../services";
import * as notify from "../ui/notify";
import {
  bridgeInstallPath,
  bridgeStatus,
  ForeignBridgeFileError,
  installBridgeFile,
  removeBridgeFile,
  type BridgeFileStatus,
} from "./installFile";

/** What the install/remove commands resolve with. */
export type BridgeCommandOutcome = {
  kind: "installed" | "updated" | "removed" | "current" | "missing" | "declined" | "foreign" | "error";
  file?: string;
  message?: string;
  status?: BridgeFileStatus;
};

/** Options of the install/remove commands (scripts and tests). */
export interface BridgeCommandOptions {
  /** false: skip the modal question (the caller already has the user's consent). */
  confirm?: boolean;
}

const UPDATE_DECLINED_KEY = "piContext.liveBridge.updateDeclined";

/** Installs, removes and offers to update the bridge in pi's agent dir. */
export class BridgeInstaller {
  private updateOffered = false;
  /** The shipped bundle's text and stamp (read again only when the file on disk changes). */
  private shipped: { stamp: string; body: string } | undefined;
  /** The last {@link installedStatus}, valid while both files keep their stamps. */
  private status: { key: string; status: BridgeFileStatus } | undefined;

  constructor(
    private readonly services: BaseServices,
    /** The shipped bundle (`dist/bridge/pi-context-bridge.js`). */
    readonly bundlePath: string,
  ) {}

  private agentDir(): string {
    return this.services.sessions.agentDir();
  }

  /** The shipped bundle's text; read again only when its stamp changed. @throws the `fs` error. */
  private bundle(): string {
    const stamp = fileStamp([this.bundlePath]);
    if (this.shipped?.stamp !== stamp || stamp === "-")
      this.shipped = { stamp, body: fs.readFileSync(this.bundlePath, "utf8") };
    return this.shipped.body;
  }

  /** The shipped bundle and the installed file's state; an error outcome (reported) when the bundle cannot be read. */
  private read(prefix: string): { body: string; status: BridgeFileStatus } | BridgeCommandOutcome {
    try {
      const body = this.bundle();
      return { body, status: bridgeStatus(this.agentDir(), body) };
    } catch (error) {
      const message = `${prefix}${(error as Error).message}`;
      void notify.error(message);
      return { kind: "error", message };
    }
  }

  /**
   * The installed bridge compared with the shipped one. Both files are read and hashed again only
   * when one of their stamps (`mtime:size:inode`) changed: the welcome views and every live poll ask.
   * @throws the `fs` error when the shipped bundle or the installed file cannot be read.
   */
  installedStatus(): BridgeFileStatus {
    const agentDir = this.agentDir();
    const key = `${agentDir}\n${fileStamp([this.bundlePath, bridgeInstallPath(agentDir)])}`;
    if (this.status?.key === key) return this.status.status;
    const status = bridgeStatus(agentDir, this.bundle());
    this.status = { key, status };
    return status;
  }

  /** "Pi Context: Install Live Bridge": asks first (modal), then writes `<agentDir>/extensions/pi-context-bridge.js`. */
  async install(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    const read = this.read(vscode.l10n.t("cannot read the bridge: "));
    if ("kind" in read) return read;
    const { body, status } = read;
    if (status.state === "foreign") {
      const message = new ForeignBridgeFileError(status.file).message;
      void notify.error(`${message}`);
      return { kind: "foreign", file: status.file, message, status };
    }
    if (status.state === "current") {
      void notify.info(vscode.l10n.t("the live bridge {0} is installed ({1}).", BRIDGE_VERSION, status.file));
      return { kind: "current", file: status.file, status };
    }
    const verb = status.state === "missing" ? "Install" : "Update";
    const verbLabel = verb === "Install" ? vscode.l10n.t("Install") : vscode.l10n.t("Update");
    if (options.confirm !== false) {
      const was = status.installed
        ? status.state === "modified"
          ? vscode.l10n.t(" (installed: {0}, edited since)", status.installed.version)
          : status.state === "newer"
            ? vscode.l10n.t(" (installed: {0}, newer than this extension's)", status.installed.version)
            : vscode.l10n.t(" (installed: {0})", status.installed.version)
        : "";
      const detail = [
        vscode.l10n.t(
          "pi-context writes {0}: a pi extension (bridge {1}{2}, tested with pi {3}). pi loads it at its next start, or after /reload in a running pi, in every session.",
          status.file,
          BRIDGE_VERSION,
          was,
          PI_VERSION_RANGE.text,
        ),
        "",
        vscode.l10n.t(
          "While pi runs, the bridge lets VS Code read pi's context usage and ask pi to compact or switch branches; pi's own model and API key write the summaries.",
        ),
        "",
        vscode.l10n.t(
          "It listens only on a local socket in {0} (readable by you alone) and checks a random token; it never opens a network port.",
          liveDir(this.agentDir()),
        ),
        "",
        vscode.l10n.t('Remove it any time with "Pi Context: Remove Live Bridge".'),
      ].join("\n");
      const pick = await vscode.window.showInformationMessage(
        verb === "Install"
          ? vscode.l10n.t("Install the pi-context live bridge?")
          : vscode.l10n.t("Update the pi-context live bridge?"),
        { modal: true, detail },
        verbLabel,
      );
      if (pick !== verbLabel) return { kind: "declined", file: status.file, status };
    }
    try {
      installBridgeFile(this.agentDir(), body);
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(vscode.l10n.t("could not install the live bridge: {0}", message));
      return { kind: "error", file: status.file, message };
    }
    this.services.log.info(
      `live bridge: ${verb === "Install" ? "installed" : "updated"} ${status.file} (bridge ${BRIDGE_VERSION})`,
    );
    void notify.info(
      verb === "Install"
        ? vscode.l10n.t(
            "live bridge {0} installed in {1}. Start pi (or run /reload in a running pi) to load it.",
            BRIDGE_VERSION,
            status.file,
          )
        : vscode.l10n.t(
            "live bridge {0} updated in {1}. Start pi (or run /reload in a running pi) to load it.",
            BRIDGE_VERSION,
            status.file,
          ),
    );
    return { kind: verb === "Install" ? "installed" : "updated", file: status.file, status: this.installedStatus() };
  }

  /** "Pi Context: Remove Live Bridge": removes only our file (after asking). */
  async remove(options: BridgeCommandOptions = {}): Promise<BridgeCommandOutcome> {
    const read = this.read("");
    if ("kind" in read) return read;
    const { body, status } = read;
    if (status.state === "missing") {
      void notify.info(vscode.l10n.t("no live bridge is installed ({0}).", status.file));
      return { kind: "missing", file: status.file, status };
    }
    if (status.state === "foreign") {
      const message = new ForeignBridgeFileError(status.file).message;
      void notify.error(`${message}`);
      return { kind: "foreign", file: status.file, message, status };
    }
    if (options.confirm !== false) {
      const removeLabel = vscode.l10n.t("Remove");
      const pick = await vscode.window.showWarningMessage(
        vscode.l10n.t("Remove the pi-context live bridge?"),
        {
          modal: true,
          detail: vscode.l10n.t(
            "Deletes {0}. Running pi processes keep the bridge until they restart (or /reload).",
            status.file,
          ),
        },
        removeLabel,
      );
      if (pick !== removeLabel) return { kind: "declined", file: status.file, status };
    }
    try {
      removeBridgeFile(this.agentDir(), body);
    } catch (error) {
      const message = (error as Error).message;
      void notify.error(vscode.l10n.t("could not remove the live bridge: {0}", message));
      return { kind: "error", file: status.file, message };
    }
    this.services.log.info(`live bridge: removed ${status.file}`);
    void notify.info(
      vscode.l10n.t("live bridge removed. Running pi processes keep it until they restart (or /reload)."),
    );
    return { kind: "removed", file: status.file, status };
  }

  /** Offer an update when our installed bridge is outdated (once per window; "Not Now" remembered per shipped build). */
  async offerUpdateIfOutdated(): Promise<BridgeFileStatus | undefined> {
    if (this.updateOffered) return undefined;
    let status: BridgeFileStatus;
    try {
      status = this.installedStatus();
    } catch (error) {
      this.services.log.warn(`live bridge: ${(error as Error).message}`);
      return undefined;
    }
    if (status.state === "modified")
      this.services.log.warn(`live bridge: ${status.file} was edited after it was installed`);
    if (status.state !== "outdated") return status;
    const state = this.services.context.globalState;
    if (state.get<string>(UPDATE_DECLINED_KEY) === status.shipped.sha256) return status;
    this.updateOffered = true;
    const pick = await notify.info(
      vscode.l10n.t(
        "the live bridge installed in pi ({0}) is outdated; this extension ships {1}.",
        status.installed?.version ?? "?",
        BRIDGE_VERSION,
      ),
      vscode.l10n.t("Update"),
      vscode.l10n.t("Not Now"),
    );
    if (pick === vscode.l10n.t("Update")) await this.install({ confirm: false });
    else if (pick === vscode.l10n.t("Not Now")) await state.update(UPDATE_DECLINED_KEY, status.shipped.sha256);
    return status;
  }
}
