/**
 * Session health (under the header): the session doctor's findings, counted by severity, readable
 * text, each row a button that reveals the entry in the Pi Session tree (or opens the file at the
 * line: lines pi skips, settings files); "Check Session Health…" runs the command (findings and
 * repairs).
 */

import type { ProblemModel } from "../../src/shared/protocol";
import { pluralText } from "../../src/shared/format";
import { h, icon } from "../dom";
import { basename } from "../format";
import type { View } from "../view";
import { actionButton } from "../widgets";
import * as l10n from "@vscode/l10n";

const SEVERITY_ICON: Record<ProblemModel["severity"], string> = { error: "error", warning: "warning", info: "info" };
/** Problems shown before "Show all N". */
const PROBLEMS_SHOWN = 5;

/** Where a problem is, shortly: `entry <id>` (and its line), `line 5`, a settings file's name, or nothing. */
function problemWhere(p: ProblemModel): string {
  if (p.entryId && p.source === "session")
    return `entry ${p.entryId}${p.line !== undefined ? l10n.t(" · line {0}", p.line) : ""}`;
  if (p.line !== undefined) return `line ${p.line}`;
  if (p.source === "settings" && p.file) return basename(p.file);
  return p.entryId ? `entry ${p.entryId}` : "";
}

/** The session health box of the shown session, null without findings (they come errors first). */
export function renderProblems(view: View): HTMLElement | null {
  const st = view.state;
  const ui = view.ui;
  const problems = st.session!.problems;
  if (problems.length === 0) return null;
  const counts = (["error", "warning", "info"] as const)
    .map((sev) => [sev, problems.filter((p) => p.severity === sev).length] as const)
    .filter(([, n]) => n > 0)
    .map(([sev, n]) =>
      sev === "error"
        ? pluralText(n, l10n.t("{0} error"), l10n.t("{0} errors"))
        : sev === "warning"
          ? pluralText(n, l10n.t("{0} warning"), l10n.t("{0} warnings"))
          : pluralText(n, l10n.t("{0} note"), l10n.t("{0} notes")),
    )
    .join(", ");
  const worst = problems[0]!.severity;
  const repairable = problems.filter((p) => p.repair === "context-edit" || p.repair === "leaf-marker").length;
  const box = h("section", {
    class: `problems sev-${worst}`,
    "aria-label": l10n.t("Session health"),
    "data-testid": "problems",
  });
  box.appendChild(
    h(
      "div",
      { class: "problems-head" },
      icon(SEVERITY_ICON[worst], { size: "14" }),
      h(
        "strong",
        null,
        l10n.t("Session health: {0}", pluralText(problems.length, l10n.t("{0} problem"), l10n.t("{0} problems"))),
      ),
      h(
        "span",
        { class: "muted", "data-testid": "problem-counts" },
        ` (${counts}${repairable ? l10n.t("; {0} repairable", repairable) : ""})`,
      ),
      st.capabilities.checkHealth
        ? actionButton(
            view.send,
            "checkHealth",
            repairable ? "wrench" : "pulse",
            repairable ? l10n.t("Repair…") : l10n.t("Check Session Health…"),
            { type: "checkHealth" },
            true,
            repairable
              ? l10n.t("Pi Context: Check Session Health — review the findings and append the entries that repair them")
              : l10n.t("Pi Context: Check Session Health — review the findings"),
          )
        : null,
    ),
  );
  const list = h("ul", { class: "problem-list" });
  const shown = ui.allProblems ? problems : problems.slice(0, PROBLEMS_SHOWN);
  for (const p of shown) {
    const where = problemWhere(p);
    const inTree = Boolean(p.entryId && p.source === "session" && st.capabilities.revealEntry);
    const target = inTree
      ? l10n.t("entry {0} in the Pi Session tree", p.entryId ?? "")
      : p.file
        ? `${p.file}${p.line !== undefined ? `:${p.line}` : ""}`
        : "";
    const clickable = Boolean(p.file || inTree);
    const row = h(
      clickable ? "button" : "div",
      {
        class: `problem sev-${p.severity}`,
        "data-problem": p.id,
        "data-code": p.code,
        "data-key": `problem-${p.id}`,
        title: clickable ? l10n.t("Open {0}", target) : undefined,
      },
      icon(SEVERITY_ICON[p.severity], { size: "14", class: "problem-icon" }),
      h("span", { class: "problem-title" }, p.title),
      where ? h("span", { class: "problem-where mono" }, where) : null,
      h(
        "span",
        { class: "problem-message" },
        p.message,
        p.repair === "context-edit" || p.repair === "leaf-marker"
          ? h(
              "span",
              { class: "problem-repair", title: l10n.t("An appended entry repairs this (Repair…)") },
              " ",
              icon("wrench", { size: "12" }),
              l10n.t(" repairable"),
            )
          : p.repair === "compaction"
            ? h(
                "span",
                { class: "problem-repair", title: l10n.t("A compaction helps (Compact…)") },
                " ",
                icon("archive", { size: "12" }),
                l10n.t(" compaction helps"),
              )
            : null,
      ),
    );
    if (clickable) row.addEventListener("click", () => view.send({ type: "openProblem", id: p.id }));
    list.appendChild(h("li", null, row));
  }
  box.appendChild(list);
  if (problems.length > PROBLEMS_SHOWN) {
    const more = h(
      "button",
      { class: "link", "data-key": "problems-more" },
      ui.allProblems ? l10n.t("Show fewer") : l10n.t("Show all {0}", problems.length),
    );
    more.addEventListener("click", () => {
      ui.allProblems = !ui.allProblems;
      view.saveAndRender();
    });
    box.appendChild(more);
  }
  return box;
}
