/**
 * The gauge section: the headline (`used / window tokens`, percent in pi's footer colour, badges
 * for live numbers from the running pi and for pi's estimate), tokens until auto-compaction, the
 * bar, the facts behind the numbers (window and its source, reserve and where it is set, how it
 * was counted, pi's footer), then the breakdown and the history.
 */

import type { GaugeModel, UsageModel } from "../../src/shared/protocol";
import { autoCompactsText, formatCount, tokensText } from "../../src/shared/format";
import { append, h, icon } from "../dom";
import { short } from "../format";
import type { View } from "../view";
import { renderBar } from "./bar";
import { renderBreakdown } from "./breakdown";
import { renderHistory } from "./history";
import * as l10n from "@vscode/l10n";

/** Where a compaction setting (`reserveTokens`, `keepRecentTokens`) was set, in words. */
function settingSourceLabel(source: GaugeModel["reserveSource"]): string {
  switch (source) {
    case "default":
      return l10n.t("pi default");
    case "global":
      return l10n.t("global settings");
    case "project":
      return l10n.t("project settings");
    case "override":
      return "modelOverrides";
  }
}

function renderHeadline(g: GaugeModel): HTMLElement {
  const headline = h("div", { class: "headline" });
  const used = h(
    "span",
    { class: "used", "data-testid": "gauge-used", "data-value": String(g.used) },
    formatCount(g.used),
  );
  const windowText =
    g.window !== null
      ? h(
          "span",
          { class: "window" },
          " / ",
          h("span", { "data-testid": "gauge-window", "data-value": String(g.window) }, formatCount(g.window)),
          l10n.t(" tokens"),
        )
      : h("span", { class: "window" }, l10n.t(" tokens (window unknown)"));
  append(headline, [used, windowText]);
  if (g.percent !== null)
    headline.appendChild(
      h("span", { class: `percent level-${g.level}`, "data-testid": "gauge-percent" }, `${g.percent.toFixed(1)}%`),
    );
  if (g.live) {
    const activity = g.live.activity && g.live.activity !== "idle" ? l10n.t("; pi is {0}", g.live.activity) : "";
    headline.appendChild(
      h(
        "vscode-badge",
        {
          class: "live-badge",
          "data-testid": "gauge-live",
          title: l10n.t(
            "The running pi (pid {0}, pi {1}, bridge {2}) reports these numbers{3}; Compact and Switch run in that pi.",
            g.live.pid,
            g.live.piVersion,
            g.live.bridgeVersion,
            activity,
          ),
        },
        "live",
      ),
    );
  }
  if (g.estimateFailure) {
    // pi has no number here: ours is shown as ours, and why pi has none
    used.textContent = `≈${formatCount(g.used)}`;
    headline.appendChild(
      h(
        "vscode-badge",
        { class: "estimate-badge", "data-testid": "gauge-estimate-failure", title: g.estimateFailure },
        l10n.t("pi fails"),
      ),
    );
  } else if (!g.usageKnown) {
    headline.appendChild(
      h(
        "vscode-badge",
        {
          class: "estimate-badge",
          "data-testid": "gauge-estimate",
          title: l10n.t(
            "Right after a compaction pi's footer shows “?” until the next answer reports usage. This number is pi's own estimate (chars/4) of the compacted context.",
          ),
        },
        l10n.t("estimate · pi shows ?"),
      ),
    );
  }
  return headline;
}

/**
 * How far the context is from pi's auto-compaction threshold (or that it is past it, or off), and
 * the forecast in turns when it is meaningful (its basis in the title).
 */
function renderUntil(g: GaugeModel, forecast: UsageModel["forecast"] | undefined): HTMLElement {
  const until = h("div", { class: "until", "data-testid": "gauge-until" });
  if (g.tokensUntilCompaction !== null && g.threshold !== null) {
    if (!g.autoCompaction)
      until.append(
        icon("circle-slash", { size: "14" }),
        ` Auto-compaction is off (threshold would be ${formatCount(g.threshold)}).`,
      );
    else if (g.tokensUntilCompaction >= 0) {
      until.append(
        icon("arrow-right", { size: "14" }),
        " ",
        h("strong", { "data-value": String(g.tokensUntilCompaction) }, tokensText(g.tokensUntilCompaction, short)),
        ` until auto-compaction (at ${formatCount(g.threshold)})`,
      );
      if (forecast)
        until.append(
          " · ",
          h(
            "span",
            {
              class: "forecast",
              "data-testid": "gauge-forecast",
              "data-value": String(forecast.turns),
              title: forecast.basis,
            },
            forecast.text,
          ),
        );
    } else {
      until.classList.add("over");
      until.append(
        icon("warning", { size: "14" }),
        " ",
        h(
          "strong",
          { "data-value": String(g.tokensUntilCompaction) },
          l10n.t("{0} over", tokensText(-g.tokensUntilCompaction, short)),
        ),
        ` the auto-compaction threshold (${formatCount(g.threshold)}): ${autoCompactsText(g.nothingToCompact)}.`,
      );
    }
  } else until.append("Context window or reserve unknown: no threshold.");
  return until;
}

/** The facts behind the numbers; the `title`s name the files and settings keys. */
function renderFacts(view: View): HTMLElement {
  const g = view.state.gauge!;
  const b = view.state.breakdown!;
  const facts = h("dl", { class: "facts", "data-testid": "gauge-facts" });
  const fact = (dt: string, dd: Node | string, title?: string) =>
    append(facts, [h("dt", null, dt), h("dd", title ? { title } : null, dd)]);
  fact(l10n.t("Model"), g.model ?? "—");
  fact("pi", g.pi, g.piPath);
  fact(
    l10n.t("Context window"),
    g.window !== null
      ? `${formatCount(g.window)} — ${g.windowSourceText}`
      : l10n.t("unknown — {0}", g.windowSourceText),
    g.windowFile ?? g.windowDetail,
  );
  fact(
    "reserveTokens",
    g.reserveTokens !== null ? `${formatCount(g.reserveTokens)} · ${settingSourceLabel(g.reserveSource)}` : "invalid",
    [g.reserveKey, g.reserveFile].filter(Boolean).join(" — "),
  );
  if (g.keepRecentTokens !== null)
    fact(
      "keepRecentTokens",
      `${formatCount(g.keepRecentTokens)} · ${settingSourceLabel(g.keepRecentSource)}`,
      [g.keepRecentKey, g.keepRecentFile].filter(Boolean).join(" — "),
    );
  fact(
    l10n.t("Counted as"),
    g.method === "usage+estimate"
      ? l10n.t("provider usage {0} + estimate {1}", formatCount(g.usageTokens), formatCount(g.trailingTokens))
      : l10n.t("pi's estimate (no usable provider usage)"),
    b.method === "scaled"
      ? l10n.t(
          "Breakdown: the messages covered by the last provider usage are scaled ×{0} so they add up to it.",
          b.scale.toFixed(3),
        )
      : undefined,
  );
  fact(l10n.t("pi's footer"), h("span", { class: "mono" }, g.footer));
  return facts;
}

/**
 * The gauge section of a shown session (`view.state.gauge` and `breakdown` set): headline, bar,
 * facts, pi's warnings and the breakdown; its history chart is {@link renderGaugeHistory}'s,
 * appended to it as a later part (`panelParts` in main.ts).
 */
export function renderGaugeSection(view: View): HTMLElement {
  const st = view.state;
  const g = st.gauge!;
  const section = h("section", { class: "gauge", "aria-label": l10n.t("Context window") });
  section.append(
    renderHeadline(g),
    renderUntil(g, st.usage?.forecast),
    renderBar(g, st.breakdown!.categories),
    renderFacts(view),
  );
  if (g.estimateFailure)
    section.appendChild(
      h(
        "p",
        { class: "pi-warning", "data-testid": "gauge-estimate-failure-text" },
        icon("error", { size: "14" }),
        " ",
        g.estimateFailure,
      ),
    );
  for (const warning of g.piWarnings)
    section.appendChild(
      h("p", { class: "pi-warning", "data-testid": "gauge-pi-warning" }, icon("warning", { size: "14" }), " ", warning),
    );
  section.appendChild(renderBreakdown(view));
  return section;
}

/** The gauge section's history chart (null without a point: nothing to draw). */
export function renderGaugeHistory(view: View): HTMLElement | null {
  const st = view.state;
  return st.history && st.history.points.length > 0 ? renderHistory(st.history, st.gauge!, st.usage ?? null) : null;
}
