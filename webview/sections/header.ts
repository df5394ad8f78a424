/**
 * The header: the session's name (pinned or following the latest), a sub-line of facts (model and
 * thinking level, entries, leaf, when the file was written), the session actions and the problems.
 */

import { COMPACT_ICON, formatDateTime, plural } from "../../src/shared/format";
import { h, icon } from "../dom";
import { basename } from "../format";
import type { View } from "../view";
import { actionButtons, type Action } from "../widgets";
import { renderProblems } from "./problems";

/**
 * The session actions as labelled buttons (they wrap in a narrow sidebar; never icon-only).
 * In the sidebar view the view's title bar already has Refresh, so it is left out there.
 */
function renderToolbar(view: View): HTMLElement {
  const st = view.state;
  const caps = st.capabilities;
  const compactTitle = st.session?.compactionUnavailable
    ? `Compact… — ${st.session.compactionUnavailable}`
    : "Summarize the older part of the context now (Pi: Compact Session…)";
  const actions: Action[] = [
    ["compact", COMPACT_ICON, "Compact…", { type: "compact" }, caps.compact, compactTitle],
    [
      "focusTree",
      "list-tree",
      "Switch Branch",
      { type: "focusTree" },
      caps.focusTree,
      "Switch branch in the Pi Session tree",
    ],
    [
      "selectSession",
      "list-selection",
      "Select Session…",
      { type: "selectSession" },
      caps.selectSession,
      "Pick the session to show (Pi: Select Session…)",
    ],
  ];
  if (document.body.dataset.host !== "view")
    actions.push(["refresh", "refresh", "Refresh", { type: "refresh" }, true, "Re-read the session"]);
  return h(
    "div",
    { class: "actions", role: "toolbar", "aria-label": "Session actions" },
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
      ? h("vscode-badge", { title: "Pinned with Pi: Select Session… (not following the latest)" }, "pinned")
      : null,
  );
  const sub = h(
    "div",
    { class: "session-sub muted", "data-testid": "session-sub" },
    metaItem(
      "hubot",
      `${g.model ?? "no model"}${g.thinkingLevel && g.thinkingLevel !== "off" ? `, thinking ${g.thinkingLevel}` : ""}`,
    ),
    metaItem("list-flat", plural(session.entryCount, "entry", "entries")),
    session.leafId
      ? metaItem("git-commit", `leaf ${session.leafId}`, {
          class: "meta-item mono",
          title: "The leaf: the last entry of the current path",
        })
      : null,
    session.modifiedAt > 0
      ? metaItem("history", `updated ${time(session.modifiedAt)}`, {
          title: `The session file was last written ${time(session.modifiedAt)}; pi Context read it ${time(session.readAt)}.`,
          "data-testid": "session-updated",
        })
      : null,
    session.pinned
      ? null
      : metaItem("arrow-up", "following latest", { title: "Shows the most recently written session of the workspace" }),
  );
  return h(
    "header",
    { class: "header" },
    h("div", { class: "header-main" }, meta, sub),
    renderToolbar(view),
    renderProblems(view),
  );
}
