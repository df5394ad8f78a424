/**
 * The one set of formatters of every surface (status bar, panel host and webview, tree, pickers,
 * messages, CLI): pi's footer token format, the gauge's, counts, plurals, times, sentences, and one
 * wording for when pi compacts. No `vscode` and no `node:` imports (the webview bundle includes
 * this file; `src/core` uses it for pi's footer). Words go through `@vscode/l10n` (browser-safe; English
 * unless a bundle is configured).
 */

import * as l10n from "@vscode/l10n";

/** The product name, as the status bar item, the log and every notification ("Pi Context: …") name it. */
export const PRODUCT_NAME = "Pi Context";

/**
 * pi's footer `formatTokens` (pi 1.6.0 `footer.js`): `<1000` as is, `<10000` one decimal `k`,
 * `<1e6` rounded `k`, `<1e7` one decimal `M`, else rounded `M`. A non-finite count is `?`;
 * fractions are rounded (pi only ever formats whole token counts).
 */
export function formatTokens(count: number): string {
  if (!Number.isFinite(count)) return "?";
  if (count < 1000) return String(Math.round(count));
  if (count < 10000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1000000) return `${Math.round(count / 1000)}k`;
  if (count < 10000000) return `${(count / 1000000).toFixed(1)}M`;
  return `${Math.round(count / 1000000)}M`;
}

/** `123,456`: a whole number with en-US grouping, independent of the host locale (tokens, bytes, entries). */
export function formatCount(n: number): string {
  const sign = n < 0 ? "-" : "";
  return (
    sign +
    Math.abs(Math.round(n))
      .toString()
      .replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  );
}

/**
 * When pi auto-compacts once the context is above the threshold. pi 1.6.0 checks
 * (`AgentSession._checkCompaction`) after each answer and before each request (`_prepareRun`).
 */
export function autoCompactsWhen(): string {
  return l10n.t("pi auto-compacts at its next check (after the current answer or before the next request)");
}

/**
 * What pi does above the threshold: {@link autoCompactsWhen} — unless it has nothing it can
 * summarize: pi 1.6.0 `_runAutoCompaction` then gets nothing from `prepareCompaction` and silently
 * does not compact (e.g. the provider reports far more usage than the session's content, or
 * keepRecentTokens keeps everything).
 * @param nothing why there is nothing to compact (`inspect.compactionUnavailable`), or undefined.
 */
export function autoCompactsText(nothing: string | undefined): string {
  if (nothing === undefined) return autoCompactsWhen();
  return l10n.t(
    "pi would auto-compact, but it finds nothing to summarize ({0}), so it does not compact",
    nothing.replace(/\.$/, ""),
  );
}

/**
 * The codicon of the Compact action (status-bar tooltip, panel buttons): `archive` (a box the
 * conversation is packed into) — not `fold`, whose converging arrows read as a close ✕.
 */
export const COMPACT_ICON = "archive";

/**
 * Tokens for the status bar and the panel's axis: `950`, `4.2k`, `12.5k`, `99.9k` (one decimal
 * below 100,000 so values near a small threshold stay distinguishable), `124k`, `1.2M`.
 * Not pi's footer format ({@link formatTokens} rounds to whole k from 10k).
 */
export function formatGaugeTokens(count: number): string {
  const n = Math.max(0, Math.round(count));
  if (n < 1000) return String(n);
  const k = n / 1000;
  if (Number(k.toFixed(1)) < 100) return `${k.toFixed(1)}k`;
  if (n < 1_000_000 && Math.round(k) < 1000) return `${Math.round(k)}k`;
  const m = n / 1_000_000;
  return m < 10 ? `${stripZero(m.toFixed(1))}M` : `${Math.round(m)}M`;
}

/**
 * A context window for the status bar and axis labels: `16k`, `128k`, `200k`, `1M`, `1.05M` —
 * exact where it is a round number, otherwise like {@link formatGaugeTokens}.
 */
export function formatWindowTokens(count: number): string {
  const n = Math.max(0, Math.round(count));
  if (n < 1000) return String(n);
  if (n < 1_000_000) return n % 1000 === 0 ? `${n / 1000}k` : formatGaugeTokens(n);
  const m = n / 1_000_000;
  return `${stripZero(m.toFixed(m < 10 ? 2 : 1))}M`;
}

function stripZero(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/**
 * `1 entry`, `2 entries`, `1,234 messages` (en-US digit grouping, like every count we show). The
 * default plural of our nouns: `-y` after a consonant → `-ies`, else `-s`.
 */
export function plural(
  count: number,
  singular: string,
  pluralForm = singular.endsWith("y") && !/[aeiou]y$/.test(singular) ? `${singular.slice(0, -1)}ies` : `${singular}s`,
): string {
  return `${formatCount(count)} ${Math.round(count) === 1 ? singular : pluralForm}`;
}

/** A message as a sentence: a period added unless it already ends with `.`, `!`, `?`, `…` or `:`. */
export function withPeriod(text: string): string {
  const t = text.trimEnd();
  return /[.!?…:]$/.test(t) ? t : `${t}.`;
}

/**
 * A failure message that says nothing was written: `withPeriod(message)` plus " Nothing was
 * written." unless the message already says what was written (nothing written or sent, or bytes
 * "left in the file" by a failed append).
 */
export function nothingWritten(message: string): string {
  return /[Nn]othing was (written|sent)|left in the file/.test(message)
    ? message
    : l10n.t("{0} Nothing was written.", withPeriod(message));
}

/** The one date-time format of the UI (in the user's locale): e.g. `Nov 30, 2026, 06:33:34` in en-US. */
export const DATE_TIME_OPTIONS: Intl.DateTimeFormatOptions = {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
};

/**
 * A point in time as the UI shows it everywhere: `toLocaleString(locale, DATE_TIME_OPTIONS)`.
 * @param when ms since epoch or an ISO string; an unparsable string is returned as is.
 * @param locale a BCP 47 tag (`vscode.env.language` on the host, the same passed to the webview); undefined = the runtime's.
 */
export function formatDateTime(when: number | string, locale?: string): string {
  const d = new Date(when);
  if (Number.isNaN(d.getTime())) return String(when);
  return dateTimeFormat(locale).format(d);
}

/**
 * One `Intl.DateTimeFormat` per locale: `toLocaleString` with options builds a new one on every
 * call (≈ 0.3 ms each here — the tree view formats a time for every row's tooltip).
 */
const DATE_TIME_FORMATS = new Map<string | undefined, Intl.DateTimeFormat>();

function dateTimeFormat(locale: string | undefined): Intl.DateTimeFormat {
  let format = DATE_TIME_FORMATS.get(locale);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat(locale, DATE_TIME_OPTIONS);
    } catch {
      format = new Intl.DateTimeFormat(undefined, DATE_TIME_OPTIONS); // an unknown locale tag
    }
    DATE_TIME_FORMATS.set(locale, format);
  }
  return format;
}

/**
 * pi's own money text, character for character: `$<amount.toFixed(3)>`, a negative amount `-$0.004`
 * (pi's `formatDollars`; the footer and `/session` print costs the same way). For text that
 * reproduces pi's (the footer); everything else shows {@link formatDollars}.
 */
export function piDollars(amount: number): string {
  return amount < 0 ? `-$${Math.abs(amount).toFixed(3)}` : `$${amount.toFixed(3)}`;
}

/**
 * US dollars wherever pi-context shows an amount (host, CLI, webview): pi's `$1.500`, `-$0.004`
 * ({@link piDollars}), except that a non-zero amount under $0.001 keeps two significant digits
 * (`$0.00031`, `-$0.00042`) where pi's rule shows `$0.000`: a small cost or saving never reads as
 * none. `$?` when the amount is not a finite number.
 */
export function formatDollars(amount: number): string {
  if (!Number.isFinite(amount)) return "$?";
  const rounded = Math.abs(Number(amount.toPrecision(2)));
  if (amount === 0 || rounded >= 0.001) return piDollars(amount);
  return `${amount < 0 ? "-" : ""}$${rounded.toFixed(1 - Math.floor(Math.log10(rounded)))}`;
}

/** A price in US dollars per million tokens, as catalogs give them: `$3/M`, `$0.3/M`, `$3.75/M` (4 significant digits). */
export function formatPricePerMillion(dollars: number): string {
  return Number.isFinite(dollars) ? `$${Number(dollars.toPrecision(4))}/M` : "$?/M";
}

/** An estimated token range, "≈4,373–4,625" (one number when both ends are equal). */
export function formatTokenRange(range: { low: number; high: number }): string {
  return range.low === range.high
    ? `≈${formatCount(range.low)}`
    : `≈${formatCount(range.low)}–${formatCount(range.high)}`;
}

/**
 * A token count with its noun in the right number: `1 token`, `2 tokens`, `1.2k tokens` (the noun
 * follows the value, not the rendering). `format` renders the number (default {@link formatCount};
 * {@link formatTokens} for pi's footer style).
 */
export function tokensText(count: number, format: (n: number) => string = formatCount): string {
  return Math.abs(count) === 1 ? l10n.t("{0} token", format(count)) : l10n.t("{0} tokens", format(count));
}

/**
 * A count with its noun, the two forms already localised as templates with `{0}` for the number:
 * `pluralText(3, l10n.t("{0} entry"), l10n.t("{0} entries"))` → "3 entries" (the number through
 * {@link formatCount}; one form when the rounded count is 1, like {@link plural}). Each form is its own
 * string for translators, never a word glued to a number.
 */
export function pluralText(count: number, one: string, other: string): string {
  return (Math.round(count) === 1 ? one : other).replace("{0}", formatCount(count));
}

/**
 * A read-only record whose values are computed when read: `texts` maps each key to a function that
 * returns its (localised) text, so a module-level table of words follows the language set at
 * activation (`l10n.t` must not run at module load, before the bundle is configured). Keys enumerate
 * like a plain object's.
 */
export function localisedRecord<K extends string>(texts: Record<K, () => string>): Readonly<Record<K, string>> {
  const out = {} as Record<K, string>;
  for (const key of Object.keys(texts) as K[])
    Object.defineProperty(out, key, { enumerable: true, get: () => texts[key]() });
  return Object.freeze(out);
}
