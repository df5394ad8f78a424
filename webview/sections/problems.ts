/**
 * The problems reading the session or pi's settings (under the header): readable text, each row a
 * button that opens the file at the line (or reveals the entry in the Pi Session tree).
 */

import type { ProblemModel } from "../../src/shared/protocol";
import { plural } from "../../src/shared/format";
import { h, icon } from "../dom";
import { basename } from "../format";
import type { View } from "../view";

const SEVERITY_ICON: Record<ProblemModel["severity"], string> = { error: "error", warning: "warning", info: "info" };
/** Problems shown before "Show all N". */
const PROBLEMS_SHOWN = 5;

/** Where a problem is, shortly: `line 5`, a settings file's name, `entry <id>`, or nothing. */
function problemWhere(p: ProblemModel): string {
  if (p.line !== undefined) return `line ${p.line}`;
  if (p.source === "settings" && p.file) return basename(p.file);
  return p.entryId ? `entry ${p.entryId}` : "";
}

/** The problems box of the shown session, null without problems (they come errors first). */
export function renderProblems(view: View): HTMLElement | null {
  const st = view.state;
  const ui = view.ui;
  const problems = st.session!.problems;
  if (problems.length === 0) return null;
  const counts = (["error", "warning", "info"] as const)
    .map((sev) => [sev, problems.filter((p) => p.severity === sev).length] as const)
    .filter(([, n]) => n > 0)
    .map(([sev, n]) => plural(n, sev === "info" ? "note" : sev))
    .join(", ");
  const worst = problems[0]!.severity;
  const box = h("section", { class: `problems sev-${worst}`, "aria-label": "Problems", "data-testid": "problems" });
  box.appendChild(
    h(
      "div",
      { class: "problems-head" },
      icon(SEVERITY_ICON[worst], { size: "14" }),
      h("strong", null, `${plural(problems.length, "problem")} reading the session or pi's settings`),
      h("span", { class: "muted" }, ` (${counts})`),
    ),
  );
  const list = h("ul", { class: "problem-list" });
  const shown = ui.allProblems ? problems : problems.slice(0, PROBLEMS_SHOWN);
  for (const p of shown) {
    const where = problemWhere(p);
    const target = p.file
      ? `${p.file}${p.line !== undefined ? `:${p.line}` : ""}`
      : p.entryId
        ? `entry ${p.entryId} in the Pi Session tree`
        : "";
    const clickable = Boolean(p.file || (p.entryId && st.capabilities.revealEntry));
    const row = h(
      clickable ? "button" : "div",
      {
        class: `problem sev-${p.severity}`,
        "data-problem": p.id,
        "data-code": p.code,
        "data-key": `problem-${p.id}`,
        title: clickable ? `Open ${target}` : undefined,
      },
      icon(SEVERITY_ICON[p.severity], { size: "14", class: "problem-icon" }),
      h("span", { class: "problem-title" }, p.title),
      where ? h("span", { class: "problem-where mono" }, where) : null,
      h("span", { class: "problem-message" }, p.message),
    );
    if (clickable) row.addEventListener("click", () => view.send({ type: "openProblem", id: p.id }));
    list.appendChild(h("li", null, row));
  }
  box.appendChild(list);
  if (problems.length > PROBLEMS_SHOWN) {
    const more = h(
      "button",
      { class: "link", "data-key": "problems-more" },
      ui.allProblems ? "Show fewer" : `Show all ${problems.length}`,
    );
    more.addEventListener("click", () => {
      ui.allProblems = !ui.allProblems;
      view.saveAndRender();
    });
    box.appendChild(more);
  }
  return box;
}
