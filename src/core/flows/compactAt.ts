/**
 * "Compact at…": set pi's per-model compaction settings from a percentage of the context window or
 * a token count — `compaction.modelOverrides["<provider>/<modelId>"].reserveTokens` (pi then
 * auto-compacts above `contextWindow − reserveTokens`) or `.keepRecentTokens` (what a compaction
 * keeps verbatim) — in the user's pi settings file, editing the JSON text in place with
 * `jsonc-parser` so only that one key changes (formatting, key order, other keys untouched).
 *
 * pi 1.6.0 facts this follows (`dist/core/settings-manager.js`):
 * - the key is `provider + "/" + model.id`, exact; an override field beats `compaction.<field>`;
 *   a global override is beaten only by a project override for the same model (the merge is deep);
 * - `settings.json` is strict JSON (`JSON.parse` after a BOM): a file with comments does not load
 *   in pi at all, so we refuse to edit one (the edit would not take effect) and say so;
 * - pi writes settings under a `proper-lockfile` lock (`<file>.lock`, a directory; stale after
 *   10 s) and re-reads the file under it, merging only the fields it changed — so our key survives
 *   pi's own later writes; we take the same lock and write atomically (temp file + rename next to
 *   the real file, mode kept);
 * - a running pi reads its settings at start and on `/reload` only: it applies the new value after
 *   a restart or `/reload`. pi-context's gauge applies it at once (it watches the file).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parseTree,
  type Node as JsonNode,
  type ParseError,
} from "jsonc-parser";
import * as l10n from "@vscode/l10n";

/** The two per-model compaction settings. */
export type CompactAtField = "reserveTokens" | "keepRecentTokens";

/** What the user typed, understood. */
export type CompactAtInput = { kind: "percent"; percent: number } | { kind: "tokens"; tokens: number };

/**
 * Parse `80%`, `80 %`, `150000`, `150,000`, `150k`, `1.5M`. Undefined when it is none of these.
 */
export function parseCompactAtInput(text: string): CompactAtInput | undefined {
  const t = text.trim().replace(/[,_\s](?=\d)/g, "");
  let m = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  if (m) return { kind: "percent", percent: Number(m[1]) };
  m = /^(\d+(?:\.\d+)?)\s*([kKmM]?)$/.exec(t);
  if (!m) return undefined;
  const factor = m[2] === "" ? 1 : /k/i.test(m[2]!) ? 1000 : 1_000_000;
  return { kind: "tokens", tokens: Math.round(Number(m[1]) * factor) };
}

/** The value to write and what it means. */
export interface CompactAtValue {
  field: CompactAtField;
  /** The setting's new value (tokens, a non-negative safe integer). */
  value: number;
  /** reserveTokens: pi's auto-compaction threshold afterwards (`window − reserveTokens`). */
  threshold: number;
  /** The threshold as a percentage of the window. */
  percent: number;
}

/**
 * The setting for an input, or why it is not possible.
 * - `reserveTokens`: the input is where pi should compact — a percentage of the window or a token
 *   count (the threshold); reserve = window − threshold, which must leave 0 < threshold < window.
 * - `keepRecentTokens`: the input is how much to keep — a percentage of the window or tokens; it
 *   must be below the threshold (`window − reserveTokens`), else every compaction keeps everything.
 * @param reserveTokens the current reserve (for `keepRecentTokens`' threshold).
 */
export function compactAtValue(
  field: CompactAtField,
  input: CompactAtInput,
  window: number,
  reserveTokens: number,
): CompactAtValue | { error: string } {
  if (!(window > 0)) return { error: l10n.t("The context window of this model is unknown.") };
  const tokens = input.kind === "percent" ? Math.round((window * input.percent) / 100) : input.tokens;
  if (field === "reserveTokens") {
    if (!(tokens > 0 && tokens < window))
      return { error: l10n.t("Auto-compaction must start above 0 and below the window ({0} tokens).", window) };
    const value = window - tokens;
    return { field, value, threshold: tokens, percent: (tokens / window) * 100 };
  }
  const threshold = window - reserveTokens;
  if (!(tokens > 0)) return { error: l10n.t("keepRecentTokens must be more than 0.") };
  if (tokens >= threshold)
    return { error: l10n.t("keepRecentTokens must stay below the auto-compaction threshold ({0} tokens).", threshold) };
  return { field, value: tokens, threshold, percent: (threshold / window) * 100 };
}

/** The JSON path of the override. */
export function overridePath(modelKey: string, field: CompactAtField): string[] {
  return ["compaction", "modelOverrides", modelKey, field];
}

/** Line ends and the indentation unit of a JSON text. */
function formattingOf(text: string): { eol: string; unit: string } {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indents = [...text.matchAll(/\n([ \t]+)\S/g)].map((m) => m[1]!);
  if (indents.some((i) => i.startsWith("\t"))) return { eol, unit: "\t" };
  const widths = indents.map((i) => i.length).filter((w) => w > 0);
  return { eol, unit: " ".repeat(widths.length ? Math.min(...widths) : 2) };
}

/** The indentation of the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** `JSON.stringify(value, null, unit)` with every line after the first indented by `indent`. */
function indented(value: unknown, unit: string, indent: string, eol: string): string {
  return JSON.stringify(value, null, unit).split("\n").join(`${eol}${indent}`);
}

/**
 * Set one value in a JSON(C) text, changing nothing else. `jsonc-parser` parses the text with
 * locations (`parseTree`, `findNodeAtLocation`); an existing value is replaced in place
 * (`modify` + `applyEdits`); a missing key is inserted as one new property of the deepest existing
 * object — after its last property, on a line of its own with the siblings' indentation when the
 * object spans lines, inline (`, "key": …`) when it is on one line. No other byte changes
 * (`jsonc-parser`'s own formatter would re-indent the neighbouring lines). An empty text becomes
 * an object.
 * @throws Error when the text is not a JSON object, or a key on the path holds something else than an object.
 */
export function setJsonValue(text: string, jsonPath: string[], value: unknown): string {
  const bom = text.charCodeAt(0) === 0xfeff ? "\ufeff" : "";
  const body = bom ? text.slice(1) : text;
  if (body.trim() === "") {
    let nested: unknown = value;
    for (const key of [...jsonPath].reverse()) nested = { [key]: nested };
    return `${bom}${JSON.stringify(nested, null, 2)}\n`;
  }
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (!root || errors.length > 0 || root.type !== "object") throw new Error("the file is not a JSON object");
  const existing = findNodeAtLocation(root, jsonPath);
  if (existing) return bom + applyEdits(body, modify(body, jsonPath, value, {}));
  // the deepest existing object on the path
  let depth = 0;
  let parent: JsonNode = root;
  for (; depth < jsonPath.length - 1; depth++) {
    const next = findNodeAtLocation(root, jsonPath.slice(0, depth + 1));
    if (!next) break;
    if (next.type !== "object") throw new Error(`${jsonPath.slice(0, depth + 1).join(".")} is not an object`);
    parent = next;
  }
  let inserted: unknown = value;
  for (const key of jsonPath.slice(depth + 1).reverse()) inserted = { [key]: inserted };
  const key = JSON.stringify(jsonPath[depth]);
  const { eol, unit } = formattingOf(body);
  const open = body.slice(parent.offset, parent.offset + parent.length);
  const children = parent.children ?? [];
  const last = children[children.length - 1];
  if (!open.includes("\n")) {
    const prop = `${key}: ${JSON.stringify(inserted)}`;
    if (!last)
      return bom + body.slice(0, parent.offset + 1) + ` ${prop} ` + body.slice(parent.offset + parent.length - 1);
    const at = last.offset + last.length;
    return bom + body.slice(0, at) + `, ${prop}` + body.slice(at);
  }
  const indent = last ? lineIndent(body, last.offset) : lineIndent(body, parent.offset) + unit;
  const prop = `${key}: ${indented(inserted, unit, indent, eol)}`;
  if (!last) {
    const inner = parent.offset + 1;
    return (
      bom +
      body.slice(0, inner) +
      `${eol}${indent}${prop}${eol}${lineIndent(body, parent.offset)}` +
      body.slice(parent.offset + parent.length - 1)
    );
  }
  const at = last.offset + last.length;
  return bom + body.slice(0, at) + `,${eol}${indent}${prop}` + body.slice(at);
}

/** The settings file changed between the question and the write (nothing written). */
export class SettingsChangedError extends Error {
  constructor(file: string) {
    super(l10n.t("{0} changed while you were deciding. Nothing was written; try again.", file));
    this.name = "SettingsChangedError";
  }
}

/** Why a settings file cannot be edited (pi could not read it, or ours would break it). */
export class SettingsEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsEditError";
  }
}

/** How long a lock may be held before it counts as stale (proper-lockfile's default `stale`). */
const LOCK_STALE_MS = 10_000;

/** Take pi's settings lock (`proper-lockfile`: `mkdir <file>.lock`), retrying 10 × 20 ms like pi. */
function lock(file: string): () => void {
  const dir = `${file}.lock`;
  for (let attempt = 1; ; attempt++) {
    try {
      fs.mkdirSync(dir);
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - fs.statSync(dir).mtimeMs > LOCK_STALE_MS) {
          fs.rmSync(dir, { recursive: true, force: true });
          continue;
        }
      } catch {
        continue; // removed meanwhile
      }
      if (attempt >= 10)
        throw new SettingsEditError(
          l10n.t("pi is writing {0} right now (it holds {1}). Nothing was written; try again.", file, dir),
        );
      const until = Date.now() + 20;
      while (Date.now() < until) {
        // pi sleeps synchronously too
      }
    }
  }
}

/**
 * Set `compaction.modelOverrides[modelKey][field] = value` in `file`, if the file still has the
 * text the user decided on (`expected`; `undefined` = the file did not exist). The result must be
 * strict JSON (what pi reads); the write is atomic and keeps the file's mode; a symlinked settings
 * file stays a symlink (its target is replaced).
 * @returns the new text.
 * @throws {SettingsChangedError} the file changed since `expected` (nothing written).
 * @throws {SettingsEditError} pi could not read the file (comments, not an object) or it is locked.
 */
export function writeCompactionOverride(
  file: string,
  expected: string | undefined,
  modelKey: string,
  field: CompactAtField,
  value: number,
): string {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new SettingsEditError(l10n.t("{0} must be a non-negative whole number of tokens, not {1}.", field, value));
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const release = lock(file);
  try {
    let current: string | undefined;
    try {
      current = fs.readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (current !== expected) throw new SettingsChangedError(file);
    const text = current ?? "";
    if (text.trim() !== "") {
      try {
        JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch (error) {
        throw new SettingsEditError(
          l10n.t(
            "pi cannot read {0} ({1}): pi 1.6.0 reads settings.json as strict JSON, without comments, and ignores it as a whole. Fix the file first; nothing was written.",
            file,
            (error as Error).message,
          ),
        );
      }
    }
    let next: string;
    try {
      next = setJsonValue(text, overridePath(modelKey, field), value);
    } catch (error) {
      throw new SettingsEditError(l10n.t("Cannot edit {0}: {1}. Nothing was written.", file, (error as Error).message));
    }
    if (!next.endsWith("\n") && text === "") next += "\n";
    JSON.parse(next.charCodeAt(0) === 0xfeff ? next.slice(1) : next); // what pi will read
    let target = file;
    let mode = 0o644;
    try {
      target = fs.realpathSync(file);
      mode = fs.statSync(target).mode & 0o7777;
    } catch {
      // a new file
    }
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.pi-context-${process.pid}.tmp`);
    try {
      fs.writeFileSync(temp, next, { mode });
      fs.renameSync(temp, target);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
    return next;
  } finally {
    release();
  }
}

/**
 * Which settings file to write: the project's `.pi/settings.json` when the current value comes
 * from a project override for this model (a global one would not win), else the global one.
 */
export function settingsFileFor(
  source: { source: string; file?: string | undefined },
  agentDir: string,
): { file: string; scope: "global" | "project" } {
  if (source.source === "override" && source.file && path.basename(path.dirname(source.file)) === ".pi")
    return { file: source.file, scope: "project" };
  return { file: path.join(agentDir, "settings.json"), scope: "global" };
}
