/** The panel's transient notices (the host's `notice` messages and the webview's own), bottom right. */

import { h, icon } from "./dom";
import type { NoticeLevel } from "./view";

/** How long a notice stays (ms). */
const NOTICE_MS = 4000;

/** The live region notices appear in; `main.ts` keeps it in the panel across renders. */
export const noticeArea = h("div", { class: "notices", role: "status", "aria-live": "polite" });

/** Show a notice for {@link NOTICE_MS}. The text goes in as text (never markup). */
export function showNotice(level: NoticeLevel, text: string): void {
  const n = h(
    "div",
    { class: `notice ${level}` },
    icon(level === "info" ? "info" : level === "warning" ? "warning" : "error", { size: "14" }),
    h("span", null, text),
  );
  noticeArea.appendChild(n);
  setTimeout(() => n.remove(), NOTICE_MS);
}
