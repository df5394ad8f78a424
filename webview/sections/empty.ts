/** The empty state: the host's explanation and only the actions that make sense without a session. */

import type { PanelState } from "../../src/shared/protocol";
import { h, icon } from "../dom";
import type { Send } from "../view";
import { actionButton } from "../widgets";
import * as l10n from "@vscode/l10n";

/**
 * The empty panel for `st.emptyReason` (`starting`, `no-folder`, `no-session`, `error`; no state
 * yet = loading): Open Folder… without a folder, Select Session… once discovery ran, Refresh after
 * an error.
 */
export function renderEmpty(st: PanelState | undefined, send: Send): HTMLElement {
  const actions: HTMLElement[] = [];
  if (st?.emptyReason === "no-folder")
    actions.push(
      actionButton(
        send,
        "openFolder",
        "folder-opened",
        l10n.t("Open Folder…"),
        { type: "openFolder" },
        true,
        l10n.t("Open the folder pi ran in"),
      ),
    );
  if (st && st.emptyReason !== "starting" && st.capabilities.selectSession)
    actions.push(
      actionButton(
        send,
        "selectSession",
        "list-selection",
        l10n.t("Select Session…"),
        { type: "selectSession" },
        true,
        l10n.t("Pick any pi session to show (Pi Context: Select Session…)"),
      ),
    );
  if (st?.emptyReason === "error")
    actions.push(
      actionButton(
        send,
        "refresh",
        "refresh",
        l10n.t("Refresh"),
        { type: "refresh" },
        true,
        l10n.t("Re-read the session"),
      ),
    );
  return h(
    "div",
    { class: "empty", "data-reason": st?.emptyReason ?? "loading" },
    icon(st?.emptyReason === "no-folder" ? "folder" : "pulse", { size: "32" }),
    h("p", { "data-testid": "empty-message" }, st?.emptyMessage ?? l10n.t("Loading…")),
    actions.length
      ? h("div", { class: "actions", role: "toolbar", "aria-label": l10n.t("Actions") }, ...actions)
      : null,
  );
}
