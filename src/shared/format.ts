/**
 * The formatters of every surface (status bar, panel, tree, CLI). No `vscode` or `node:` imports:
 * the webview bundle and `src/core` include it. Words go through `@vscode/l10n` (browser-safe).
 */

import * as l10n from "@vscode/l10n";

export const PRODUCT_NAME = "Pi Context";

/** pi 1.6.0's footer `formatTokens` (`footer.js`); a non-finite count is `?`. */
export function formatTokens(count: number): string {
  if (!Number.isFinite(count)) return "?";
  if (count < 1000) return String(Math.round(count));
  if (count < 10000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1000000) return `${Math.round(count / 1000)}k`;
  if (count < 10000000) return `${(count / 1000000).toFixed(1)}M`;
  return `${Math.round(count / 1000000)}M`;
}

/** `123,456`: en-US grouping, independent of the host locale. */
export function formatCount(n: number): string {
  const sign = n < 0 ? "-" : "";
  return (
    sign +
    Math.abs(Math.round(n))
      .toString()
      .replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  );
}

/** pi 1.6.0 checks (`_checkCompaction`) after each answer and before each request (`_prepareRun`). */
export function autoCompactsWhen(): string {
  return l10n.t("pi auto-compacts at its next check (after the current answer or before the next request)");
}

/** Above the threshold with nothing to summarize, pi 1.6.0's `_runAutoCompaction` silently does not compact. */
export function autoCompactsText(nothing: string | undefined): string {
  if (nothing === undefined) return autoCompactsWhen();
  return l10n.t(
    "pi would auto-compact, but it finds nothing to summarize ({0}), so it does not compact",
    nothing.replace(/\.$/, ""),
  );
}

/** `archive`, not `fold`: fold's converging arrows read as a close ✕. */
export const COMPACT_ICON = "archive";

/** `950`, `4.2k`, `99.9k`, `124k`, `1.2M`: one decimal below 100k so values near a small threshold differ. */
export function formatGaugeTokens(count: number): string {
  const n = Math.max(0, Math.round(count));
  if (n < 1000) return String(n);
  const k = n / 1000;
  if (Number(k.toFixed(1)) < 100) return `${k.toFixed(1)}k`;
  if (n < 1_000_000 && Math.round(k) < 1000) return `${Math.round(k)}k`;
  const m = n / 1_000_000;
  return m < 10 ? `${stripZero(m.toFixed(1))}M` : `${Math.round(m)}M`;
}

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

/** `1 entry`, `2 entries`, `1,234 messages`: consonant + `y` → `-ies`, else `-s`. */
export function plural(
  count: number,
  singular: string,
  pluralForm = singular.endsWith("y") && !/[aeiou]y$/.test(singular) ? `${singular.slice(0, -1)}ies` : `${singular}s`,
): string {
  return `${formatCount(count)} ${Math.round(count) === 1 ? singular : pluralForm}`;
}

export function withPeriod(text: string): string {
  const t = text.trimEnd();
  return /[.!?…:]$/.test(t) ? t : `${t}.`;
}

/** `withPeriod(message)` + " Nothing was written." unless the message already says what was written. */
export function nothingWritten(message: string): string {
  return /[Nn]othing was (written|sent)|left in the file/.test(message)
    ? message
    : l10n.t("{0} Nothing was written.", withPeriod(message));
}

export const DATE_TIME_OPTIONS: Intl.DateTimeFormatOptions = {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
};

/** ms since epoch or an ISO string (an unparsable one is returned as is), in `locale` (BCP 47). */
export function formatDateTime(when: number | string, locale?: string): string {
  const d = new Date(when);
  if (Number.isNaN(d.getTime())) return String(when);
  return dateTimeFormat(locale).format(d);
}

/** `toLocaleString` with options builds a formatter per call; the tree formats one per row. */
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

/** pi's `formatDollars`, character for character (`$0.123`, `-$0.004`): for text that reproduces pi's. */
export function piDollars(amount: number): string {
  return amount < 0 ? `-$${Math.abs(amount).toFixed(3)}` : `$${amount.toFixed(3)}`;
}

/** Like {@link piDollars}, but under $0.001 two significant digits: a small cost never reads as none. */
export function formatDollars(amount: number): string {
  if (!Number.isFinite(amount)) return "$?";
  const rounded = Math.abs(Number(amount.toPrecision(2)));
  if (amount === 0 || rounded >= 0.001) return piDollars(amount);
  return `${amount < 0 ? "-" : ""}$${rounded.toFixed(1 - Math.floor(Math.log10(rounded)))}`;
}

export function formatPricePerMillion(dollars: number): string {
  return Number.isFinite(dollars) ? `$${Number(dollars.toPrecision(4))}/M` : "$?/M";
}

export function formatTokenRange(range: { low: number; high: number }): string {
  return range.low === range.high
    ? `≈${formatCount(range.low)}`
    : `≈${formatCount(range.low)}–${formatCount(range.high)}`;
}

export function tokensText(count: number, format: (n: number) => string = formatCount): string {
  return Math.abs(count) === 1 ? l10n.t("{0} token", format(count)) : l10n.t("{0} tokens", format(count));
}

/** `pluralText(3, l10n.t("{0} entry"), l10n.t("{0} entries"))` → "3 entries": each form one string for translators. */
export function pluralText(count: number, one: string, other: string): string {
  return (Math.round(count) === 1 ? one : other).replace("{0}", formatCount(count));
}

/** Values computed when read: `l10n.t` must not run at module load, before the bundle is configured. */
export function localisedRecord<K extends string>(texts: Record<K, () => string>): Readonly<Record<K, string>> {
  const out = {} as Record<K, string>;
  for (const key of Object.keys(texts) as K[])
    Object.defineProperty(out, key, { enumerable: true, get: () => texts[key]() });
  return Object.freeze(out);
}
