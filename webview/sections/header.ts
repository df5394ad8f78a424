/**
 * The header: the session's name (pinned or following the latest), a sub-line of facts (model and
 * thinking level, entries, leaf, when the file was written), the session actions and the problems.
 */

import { COMPACT_ICON, formatDateTime, pluralText } from "../../src/shared/format";
import { h, icon } from "../dom";
import { basename } from "../format";
import type { View } from "../view";
import { actionButtons, type Action } from "../widgets";
import { renderProblems } from "./problems";
import * as l10n from "@vscode/l10n";

/**
 * The session actions as labelled buttons (they wrap in a narrow sidebar; never icon-only).
 * In the sidebar view the view's title bar already has Refresh, so it is left out there.
 */
function renderToolbar(view: View): HTMLElement {
  const st = view.state;
  const caps = st.capabilities;
  const compactTitle = st.session?.compactionUnavailable
    ? l10n.t("Compact… — {0}", st.session.compactionUnavailable)
    : l10n.t("Summarize the older part of the context now (Pi Context: Compact Session…)");
  const actions: Action[] = [
    ["compact", COMPACT_ICON, l10n.t("Compact…"), { type: "compact" }, caps.compact, compactTitle],
    [
      "compactUpToHere",
      "fold-up",
      l10n.t("Up to Here…"),
      { type: "compactUpToHere" },
      caps.compactUpToHere,
      l10n.t("Summarize everything before an entry you pick and keep the rest (Pi Context: Compact Up to Here…)"),
    ],
    [
      "focusTree",
      "list-tree",
      l10n.t("Switch Branch"),
      { type: "focusTree" },
      caps.focusTree,
      l10n.t("Switch branch in the Pi Session tree"),
    ],
    [
      "selectSession",
      "list-selection",
      l10n.t("Select Session…"),
      { type: "selectSession" },
      caps.selectSession,
      l10n.t("Pick the session to show (Pi Context: Select Session…)"),
    ],
  ];
  if (document.body.dataset.host !== "view")
    actions.push(["refresh", "refresh", l10n.t("Refresh"), { type: "refresh" }, true, l10n.t("Re-read the session")]);
  return h(
    "div",
    { class: "actions", role: "toolbar", "aria-label": l10n.t("Session actions") },
    ...actionButtons(view.send, actions),
  );
}

/** One fact of the header's sub-line: an icon and a text (no `·` separators, so wrapping stays clean). */
function metaItem(iconName: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
  return h(
    "span",
    { class: "meta-item", ...attrs },
    icon(iconName, { size: "14", "aria-hidden": "true" }),
    h("span", null, text),
  );
}

/** The header of a shown session (`view.state.session` and `gauge` set). */
export function renderHeader(view: View): HTMLElement {
  const st = view.state;
  const session = st.session!;
  const g = st.gauge!;
  const time = (when: number) => formatDateTime(when, st.locale);
  const name = session.label || basename(session.file);
  const meta = h(
    "div",
    { class: "session-meta" },
    h("span", { class: "session-name", title: session.file }, name),
    session.pinned
      ? h(
          "vscode-badge",
          { title: l10n.t("Pinned with Pi Context: Select Session… (not following the latest)") },
          l10n.t("pinned"),
        )
      : null,
  );
  // the leaf is an entry the tree hides: the entry the tree marks instead
  const hiddenLeaf = session.shownLeafId !== session.leafId ? session.shownLeafId : null;
  const sub = h(
    "div",
    { class: "session-sub muted", "data-testid": "session-sub" },
    metaItem(
      "hubot",
      `${g.model ?? l10n.t("no model")}${g.thinkingLevel && g.thinkingLevel !== "off" ? l10n.t(", thinking {0}", g.thinkingLevel) : ""}`,
    ),
    metaItem("list-flat", pluralText(session.entryCount, l10n.t("{0} entry"), l10n.t("{0} entries"))),
    session.leafId
      ? metaItem(
          "git-commit",
          hiddenLeaf ? l10n.t("leaf {0} (shown at {1})", session.leafId, hiddenLeaf) : `leaf ${session.leafId}`,
          {
            class: "meta-item mono",
            title: hiddenLeaf
              ? l10n.t(
                  "The leaf: the last entry of the current path. It is an entry the Pi Session tree does not show (pi's /tree hides it too); the tree marks {0}, the nearest entry before it, as the leaf.",
                  hiddenLeaf,
                )
              : l10n.t("The leaf: the last entry of the current path"),
          },
        )
      : null,
    session.modifiedAt > 0
      ? metaItem("history", `updated ${time(session.modifiedAt)}`, {
          title: l10n.t(
            "The session file was last written {0}; Pi Context read it {1}.",
            time(session.modifiedAt),
            time(session.readAt),
          ),
          "data-testid": "session-updated",
        })
      : null,
    session.pinned
      ? null
      : metaItem("arrow-up", l10n.t("following latest"), {
          title: l10n.t("Shows the most recently written session of the workspace"),
        }),
  );
  return h(
    "header",
    { class: "header" },
    h("div", { class: "header-main" }, meta, sub),
    renderToolbar(view),
    renderProblems(view),
  );
}
