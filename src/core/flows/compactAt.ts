/**
 * "Compact at…": sets pi's `compaction.modelOverrides["<provider>/<id>"].reserveTokens` or
 * `.keepRecentTokens`, editing the JSON text in place so only that key changes. pi 1.6.0
 * (`settings-manager.js`): `settings.json` is strict JSON (a file with comments does not load, so we
 * refuse it); pi writes under a `proper-lockfile` lock and merges only its own fields, so we take the
 * same lock and write atomically; a running pi applies the value after `/reload` or a restart.
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

export type CompactAtField = "reserveTokens" | "keepRecentTokens";

export type CompactAtInput = { kind: "percent"; percent: number } | { kind: "tokens"; tokens: number };

/** Parse `80%`, `80 %`, `150000`, `150,000`, `150k`, `1.5M`; undefined otherwise. */
export function parseCompactAtInput(text: string): CompactAtInput | undefined {
  const t = text.trim().replace(/[,_\s](?=\d)/g, "");
  let m = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  if (m) return { kind: "percent", percent: Number(m[1]) };
  m = /^(\d+(?:\.\d+)?)\s*([kKmM]?)$/.exec(t);
  if (!m) return undefined;
  const factor = m[2] === "" ? 1 : /k/i.test(m[2]!) ? 1000 : 1_000_000;
  return { kind: "tokens", tokens: Math.round(Number(m[1]) * factor) };
}

export interface CompactAtValue {
  field: CompactAtField;
  /** Tokens, a non-negative safe integer. */
  value: number;
  /** `window − reserveTokens`: pi's auto-compaction threshold afterwards. */
  threshold: number;
  percent: number;
}

/**
 * The setting for an input, or why not: `reserveTokens` from the threshold asked for (0 < threshold <
 * window); `keepRecentTokens` must stay below the threshold, else every compaction keeps everything.
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

export function overridePath(modelKey: string, field: CompactAtField): string[] {
  return ["compaction", "modelOverrides", modelKey, field];
}

function formattingOf(text: string): { eol: string; unit: string } {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indents = [...text.matchAll(/\n([ \t]+)\S/g)].map((m) => m[1]!);
  if (indents.some((i) => i.startsWith("\t"))) return { eol, unit: "\t" };
  const widths = indents.map((i) => i.length).filter((w) => w > 0);
  return { eol, unit: " ".repeat(widths.length ? Math.min(...widths) : 2) };
}

function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

function indented(value: unknown, unit: string, indent: string, eol: string): string {
  return JSON.stringify(value, null, unit).split("\n").join(`${eol}${indent}`);
}

/**
 * Set one value in a JSON(C) text, changing no other byte (`jsonc-parser`'s formatter would re-indent
 * neighbours): replaced in place, or inserted after the deepest existing object's last property.
 * @throws Error when the text is not a JSON object, or a key on the path holds a non-object.
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

export class SettingsChangedError extends Error {
  constructor(file: string) {
    super(l10n.t("{0} changed while you were deciding. Nothing was written; try again.", file));
    this.name = "SettingsChangedError";
  }
}

/** pi could not read the file, or our edit would break it. */
export class SettingsEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsEditError";
  }
}

/** ms; proper-lockfile's default `stale`. */
const LOCK_STALE_MS = 10_000;

/** pi's settings lock (`mkdir <file>.lock`), retrying 10 × 20 ms like pi. */
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
 * Write the override if `file` still has the text `expected` (`undefined`: did not exist), atomically,
 * mode kept, a symlink's target replaced. @returns the new text.
 * @throws {SettingsChangedError} (nothing written); {@link SettingsEditError} (unreadable for pi, or locked).
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

/** The project's `.pi/settings.json` when a project override sets the value now (a global one would lose). */
export function settingsFileFor(
  source: { source: string; file?: string | undefined },
  agentDir: string,
): { file: string; scope: "global" | "project" } {
  if (source.source === "override" && source.file && path.basename(path.dirname(source.file)) === ".pi")
    return { file: source.file, scope: "project" };
  return { file: path.join(agentDir, "settings.json"), scope: "global" };
}
