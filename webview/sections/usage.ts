/**
 * The usage & cost section: what the session used and cost like pi's footer and `/session` (every
 * entry of the file), the current model and thinking level, the current model's prices, the prompt
 * cache (hit rate, cold turns and what they cost, the cache lifetime assumed) and the forecast.
 * Everything from the host's `UsageModel`; text only through `textContent`.
 */

import type { UsageModel } from "../../src/shared/protocol";
import { formatCount, formatDollars, formatTokens, pluralText } from "../../src/shared/format";
import { append, h } from "../dom";
import type { View } from "../view";
import { collapsible } from "../widgets";
import * as l10n from "@vscode/l10n";

function tokensLine(u: UsageModel): HTMLElement {
  const line = h("span", null, l10n.t("{0} in", formatCount(u.promptTokens)));
  if (u.sessionCacheHitRate !== null)
    line.append(
      h(
        "span",
        { class: "muted" },
        l10n.t(
          " ({0} cached = {1}%{2})",
          formatCount(u.cacheRead),
          u.sessionCacheHitRate.toFixed(1),
          u.cacheWrite ? l10n.t(", {0} written", formatCount(u.cacheWrite)) : "",
        ),
      ),
    );
  line.append(` · ${formatCount(u.output)} out · ${formatCount(u.totalTokens)} total`);
  return line;
}

function cacheLine(u: UsageModel): HTMLElement {
  const line = h("span", { "data-testid": "usage-cache" });
  if (u.latestCacheHitRate !== null) line.append(`${u.latestCacheHitRate.toFixed(1)}% hit on the last turn · `);
  if (u.cold.count > 0)
    line.append(
      h(
        "span",
        {
          class: "cold",
          title: l10n.t("Turns whose prompt was mostly re-sent instead of read from the cache (marked in the chart)"),
        },
        `${pluralText(u.cold.count, l10n.t("{0} cold turn"), l10n.t("{0} cold turns"))} ${formatDollars(u.cold.missedCost)}`,
      ),
      h("span", { class: "muted" }, l10n.t(" ({0} tokens re-sent)", formatTokens(u.cold.missedTokens))),
    );
  else line.append("no cold turn on this path");
  return line;
}

/** The section (a session is shown and `state.usage` is set). */
export function renderUsageSection(view: View): HTMLElement | null {
  const u = view.state.usage;
  if (!u) return null;
  const facts = h("dl", { class: "facts usage-facts", "data-testid": "usage" });
  const fact = (dt: string, dd: Node | string, title?: string) =>
    append(facts, [h("dt", null, dt), h("dd", title ? { title } : null, dd)]);
  fact(
    l10n.t("Model"),
    u.model ?? "—",
    l10n.t("The current model as pi's footer shows it (with the thinking level for reasoning models)"),
  );
  fact(
    l10n.t("pi's footer"),
    h("span", { class: "mono", "data-testid": "usage-footer" }, u.footer || l10n.t("nothing used yet")),
    l10n.t(
      "↑ input · ↓ output · R cache read · W cache write · CH cache hit rate of the last answer · $ cost — summed by pi over every entry of the file (all branches)",
    ),
  );
  if (u.promptTokens || u.output)
    fact(l10n.t("Tokens"), tokensLine(u), l10n.t("pi's /session: input = input + cache read + cache write"));
  const cost = h("span", { "data-testid": "usage-cost" }, formatDollars(u.cost));
  if (u.byModel.length > 1)
    cost.append(
      h("span", { class: "muted" }, ` — ${u.byModel.map((r) => `${r.key} ${formatDollars(r.cost)}`).join(", ")}`),
    );
  fact(l10n.t("Cost"), cost, l10n.t("As pi stored it with each answer (pi-ai's prices when the answer arrived)"));
  if (u.prices)
    fact(
      l10n.t("Prices"),
      u.prices,
      u.pricesSource
        ? l10n.t("The current model's prices (US dollars per million tokens) from {0}", u.pricesSource)
        : l10n.t("The current model's prices (US dollars per million tokens) from pi's catalog / models.json"),
    );
  if (u.reportedCache) {
    fact(l10n.t("Cache"), cacheLine(u), l10n.t("Cache lifetime assumed: {0}", u.cacheTtl.source));
    if (u.reBilled.missCount)
      fact(
        l10n.t("Re-billed"),
        l10n.t(
          "{0} · {1} (pi's /session, whole file)",
          formatDollars(u.reBilled.missedCost),
          pluralText(u.reBilled.missCount, l10n.t("{0} miss"), l10n.t("{0} misses")),
        ),
      );
  }
  if (u.incomplete)
    fact(
      l10n.t("Unreadable"),
      l10n.t(
        "{0} without a readable usage (counted as 0)",
        pluralText(u.incomplete, l10n.t("{0} entry"), l10n.t("{0} entries")),
      ),
    );
  const description = u.footer
    ? `${formatDollars(u.cost)} · ${pluralText(u.messages.assistant, l10n.t("{0} answer"), l10n.t("{0} answers"))}`
    : l10n.t("nothing used yet");
  return collapsible(view, "usage", l10n.t("Usage & cost"), description, [h("div", { class: "usage-body" }, facts)]);
}
