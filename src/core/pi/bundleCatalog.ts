/**
 * The model catalog inlined in pi's CLI bundle (`<pi>/dist/bundle/chunks/chunk-*.js`), read as
 * data: the `pi` executable does not load `node_modules/@earendil-works/pi-ai` (its bundle is
 * self-contained), so when the pi-ai package next to pi has another version (e.g. an install with
 * overrides) this is the catalog the user's pi really uses.
 *
 * esbuild emits each provider's JSON import as an object literal and flattens it right after:
 *
 *   var anthropic_default={"anthropic-messages":{"chat:claude-fable-5":{id:"claude-fable-5",…,reasoning:!0,…}}};
 *   var ANTHROPIC_MODELS=flattenChatModelCatalog("anthropic",anthropic_default);
 *   var manifest_default={schemaVersion:6,generatedAt:"2026-11-20T10:48:49.496Z",…};
 *
 * {@link parseLiteral} reads exactly that subset (objects, arrays, strings, numbers, `!0`/`!1`,
 * `true`/`false`/`null`/`void 0`); nothing is evaluated. It depends on esbuild's output style, so
 * it is the fallback after pi-ai's JSON data (`catalog.ts`).
 */

import * as fs from "node:fs";
import * as path from "node:path";

/** A literal that is not of the supported subset. */
export class LiteralParseError extends Error {}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "`": "`",
  "\n": "",
};

/**
 * Parse one JavaScript literal of the subset esbuild emits for JSON data, starting at `pos`.
 * @returns the value and the index just after it.
 * @throws {LiteralParseError} at anything else (identifiers, template expressions, calls…).
 */
export function parseLiteral(src: string, pos: number): { value: unknown; end: number } {
  let i = pos;
  const fail = (what: string): never => {
    throw new LiteralParseError(`literal parse: ${what} at ${i}: ${src.slice(i, i + 40)}`);
  };
  const KEY = /[A-Za-z_$][\w$]*|\d+(?:\.\d+)?/y;
  const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?/iy;
  const ws = () => {
    for (;;) {
      const c = src.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else return;
    }
  };
  const str = (): string => {
    const quote = src[i];
    let out = "";
    let from = ++i;
    for (;;) {
      const c = src[i];
      if (c === undefined) return fail("unterminated string");
      if (c === quote) break;
      if (c === "\\") {
        out += src.slice(from, i);
        const e = src[++i]!;
        if (e === "u") {
          if (src[i + 1] === "{") {
            const close = src.indexOf("}", i);
            out += String.fromCodePoint(parseInt(src.slice(i + 2, close), 16));
            i = close + 1;
          } else {
            out += String.fromCharCode(parseInt(src.slice(i + 1, i + 5), 16));
            i += 5;
          }
        } else if (e === "x") {
          out += String.fromCharCode(parseInt(src.slice(i + 1, i + 3), 16));
          i += 3;
        } else {
          if (!(e in ESCAPES)) fail("escape");
          out += ESCAPES[e];
          i++;
        }
        from = i;
        continue;
      }
      if (quote === "`" && c === "$" && src[i + 1] === "{") fail("template expression");
      i++;
    }
    out += src.slice(from, i);
    i++;
    return out;
  };
  const sticky = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    const m = re.exec(src);
    if (!m) return undefined;
    i += m[0].length;
    return m[0];
  };
  const value = (): unknown => {
    ws();
    const c = src[i];
    if (c === "{") {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      while (src[i] !== "}") {
        if (i >= src.length) fail("unterminated object");
        const key = src[i] === '"' || src[i] === "'" ? str() : (sticky(KEY) ?? fail("key"));
        ws();
        if (src[i++] !== ":") fail("colon");
        o[key] = value();
        ws();
        if (src[i] === ",") i++;
        ws();
      }
      i++;
      return o;
    }
    if (c === "[") {
      i++;
      const a: unknown[] = [];
      ws();
      while (src[i] !== "]") {
        if (i >= src.length) fail("unterminated array");
        a.push(value());
        ws();
        if (src[i] === ",") i++;
        ws();
      }
      i++;
      return a;
    }
    if (c === '"' || c === "'" || c === "`") return str();
    for (const [text, v] of LITERALS) {
      if (src.startsWith(text, i)) {
        i += text.length;
        return v;
      }
    }
    const number = sticky(NUMBER);
    if (number === undefined) return fail("value");
    return Number(number);
  };
  const v = value();
  return { value: v, end: i };
}

const LITERALS: readonly (readonly [string, unknown])[] = [
  ["!0", true],
  ["!1", false],
  ["true", true],
  ["false", false],
  ["null", null],
  ["void 0", undefined],
];

/** The catalog groups found in a bundle, before flattening (`catalog.ts` flattens like pi-ai). */
export interface BundleCatalogData {
  /** The chunk the catalog is in (absolute path). */
  file: string;
  /** `providerKey → { <api>: { <key>: model } }`, the literal of each provider's JSON import. */
  groups: Map<string, Record<string, Record<string, unknown>>>;
  /** Whether the bundle flattens with `flattenChatModelCatalog` (pi-ai 1.x: chat models only). */
  chatOnly: boolean;
  /** The inlined `.manifest.json` (`schemaVersion`, `generatedAt`), if found. */
  manifest?: { schemaVersion?: number; generatedAt?: string };
}

const FLATTEN_CALL = /var [A-Z0-9_]+_MODELS\s*=\s*flatten(Chat)?ModelCatalog\("([^"]+)",\s*([\w$]+)\)/g;

/**
 * Find and parse the catalog inlined in pi's CLI bundle.
 * @param packageDir pi's package dir (`…/@earendil-works/pi-coding-agent`).
 * @throws when the bundle has no catalog chunk, or a literal does not parse ({@link LiteralParseError}).
 */
export function readBundleCatalogData(packageDir: string): BundleCatalogData {
  const chunks = path.join(packageDir, "dist", "bundle", "chunks");
  // the chunk with the most providers (a provider may also have a chunk of its own, e.g. github-copilot.js)
  let file: string | undefined;
  let src = "";
  let most = 0;
  for (const name of fs.readdirSync(chunks).sort()) {
    if (!name.endsWith(".js")) continue;
    const text = fs.readFileSync(path.join(chunks, name), "utf8");
    const count = text.includes('ModelCatalog("') ? (text.match(FLATTEN_CALL)?.length ?? 0) : 0;
    if (count > most) {
      most = count;
      file = path.join(chunks, name);
      src = text;
    }
  }
  if (!file) throw new Error(`no model catalog in ${chunks}`);
  const groups = new Map<string, Record<string, Record<string, unknown>>>();
  let chatOnly = false;
  for (const m of src.matchAll(FLATTEN_CALL)) {
    const [, chat, provider, varName] = m as unknown as [string, string | undefined, string, string];
    if (chat) chatOnly = true;
    const marker = `var ${varName}=`;
    const at = src.indexOf(marker);
    if (at < 0) throw new Error(`${file}: no literal for ${varName}`);
    const value = parseLiteral(src, at + marker.length).value;
    if (typeof value !== "object" || value === null) throw new Error(`${file}: ${varName} is not an object`);
    groups.set(provider, value as Record<string, Record<string, unknown>>);
  }
  const data: BundleCatalogData = { file, groups, chatOnly };
  const manifestAt = src.indexOf("var manifest_default=");
  if (manifestAt >= 0) {
    const manifest = parseLiteral(src, manifestAt + "var manifest_default=".length).value as Record<string, unknown>;
    data.manifest = {
      ...(typeof manifest.schemaVersion === "number" ? { schemaVersion: manifest.schemaVersion } : {}),
      ...(typeof manifest.generatedAt === "string" ? { generatedAt: manifest.generatedAt } : {}),
    };
  }
  return data;
}
