/**
 * The usage & cost section: what the session used and cost like pi's footer and `/session` (every
 * entry of the file), the current model and thinking level, the current model's prices, the prompt
 * cache (hit rate, cold turns and what they cost, the cache lifetime assumed) and the forecast.
 * Everything from the host's `UsageModel`; text only through `textContent`.
 */

import type { UsageModel } from "../../src/shared/protocol";
import { formatCount, formatDollars, formatTokens, plural } from "../../src/shared/format";
import { append, h } from "../dom";
import type { View } from "../view";
import { collapsible } from "../widgets";

function tokensLine(u: UsageModel): HTMLElement {
  const line = h("span", null, `${formatCount(u.promptTokens)} in`);
  if (u.sessionCacheHitRate !== null)
    line.append(
      h(
        "span",
        { class: "muted" },
        ` (${formatCount(u.cacheRead)} cached = ${u.sessionCacheHitRate.toFixed(1)}%${u.cacheWrite ? `, ${formatCount(u.cacheWrite)} written` : ""})`,
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
          title: "Turns whose prompt was mostly re-sent instead of read from the cache (marked in the chart)",
        },
        `${plural(u.cold.count, "cold turn")} ${formatDollars(u.cold.missedCost)}`,
      ),
      h("span", { class: "muted" }, ` (${formatTokens(u.cold.missedTokens)} tokens re-sent)`),
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
    "Model",
    u.model ?? "—",
    "The current model as pi's footer shows it (with the thinking level for reasoning models)",
  );
  fact(
    "pi's footer",
    h("span", { class: "mono", "data-testid": "usage-footer" }, u.footer || "nothing used yet"),
    "↑ input · ↓ output · R cache read · W cache write · CH cache hit rate of the last answer · $ cost — summed by pi over every entry of the file (all branches)",
  );
  if (u.promptTokens || u.output)
    fact("Tokens", tokensLine(u), "pi's /session: input = input + cache read + cache write");
  const cost = h("span", { "data-testid": "usage-cost" }, formatDollars(u.cost));
  if (u.byModel.length > 1)
    cost.append(
      h("span", { class: "muted" }, ` — ${u.byModel.map((r) => `${r.key} ${formatDollars(r.cost)}`).join(", ")}`),
    );
  fact("Cost", cost, "As pi stored it with each answer (pi-ai's prices when the answer arrived)");
  if (u.prices)
    fact(
      "Prices",
      u.prices,
      "The current model's prices (US dollars per million tokens) from pi's catalog / models.json",
    );
  if (u.reportedCache) {
    fact("Cache", cacheLine(u), `Cache lifetime assumed: ${u.cacheTtl.source}`);
    if (u.reBilled.missCount)
      fact(
        "Re-billed",
        `${formatDollars(u.reBilled.missedCost)} · ${plural(u.reBilled.missCount, "miss", "misses")} (pi's /session, whole file)`,
      );
  }
  if (u.incomplete)
    fact("Unreadable", `${plural(u.incomplete, "entry", "entries")} without a readable usage (counted as 0)`);
  const description = u.footer
    ? `${formatDollars(u.cost)} · ${plural(u.messages.assistant, "answer")}`
    : "nothing used yet";
  return collapsible(view, "usage", "Usage & cost", description, [h("div", { class: "usage-body" }, facts)]);
}
