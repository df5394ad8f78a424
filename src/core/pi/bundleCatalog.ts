/**
 * The model catalog inlined in pi's CLI bundle (`dist/bundle/chunks/chunk-*.js`), read as data: the
 * `pi` executable does not load the pi-ai package next to it, whose version may differ (pi ≤ 1.0.x asks
 * for `^1.0.3`). {@link parseLiteral} parses esbuild's `var X_default={…}` literals with acorn, evaluating
 * nothing; it depends on esbuild's output style, so it is the fallback after pi-ai's JSON (`catalog.ts`).
 */

import type { AnyNode, Options } from "acorn";
import * as fs from "node:fs";
import * as path from "node:path";

/** Beside the bundles (`esbuild.mjs` writes it): acorn loads only when a pi bundle is read. */
export const ACORN_FILE = "acorn.js";

type ParseExpressionAt = (input: string, pos: number, options: Options) => AnyNode;
let parseExpressionAt: ParseExpressionAt | undefined;

function loadAcorn(): ParseExpressionAt {
  const beside = path.join(__dirname, ACORN_FILE);
  const acorn = (fs.existsSync(beside) ? require(beside) : require("acorn")) as {
    parseExpressionAt: ParseExpressionAt;
  };
  return acorn.parseExpressionAt;
}

export class LiteralParseError extends Error {}

/**
 * Parse the JSON-like literal esbuild emits at `pos` (also `!0`, `void 0`, plain templates).
 * @returns the value and the index just after it.
 * @throws {LiteralParseError} at anything else (identifiers, calls, template expressions, syntax errors).
 */
export function parseLiteral(src: string, pos: number): { value: unknown; end: number } {
  let node: AnyNode;
  try {
    parseExpressionAt ??= loadAcorn();
    node = parseExpressionAt(src, pos, { ecmaVersion: "latest" });
  } catch (error) {
    throw new LiteralParseError(`literal parse: ${(error as Error).message}`);
  }
  return { value: literalValue(node, src), end: node.end };
}

function literalValue(node: AnyNode, src: string): unknown {
  const fail = (): never => {
    throw new LiteralParseError(`literal parse: not data at ${node.start}: ${src.slice(node.start, node.start + 40)}`);
  };
  switch (node.type) {
    case "ObjectExpression": {
      const o: Record<string, unknown> = {};
      for (const p of node.properties) {
        if (p.type !== "Property" || p.kind !== "init" || p.method || p.computed) return fail();
        const key = p.key.type === "Identifier" ? p.key.name : p.key.type === "Literal" ? String(p.key.value) : fail();
        // as JSON.parse: `__proto__` is an own key, never the prototype
        Object.defineProperty(o, key, {
          value: literalValue(p.value, src),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return o;
    }
    case "ArrayExpression":
      return node.elements.map((e) => (e && e.type !== "SpreadElement" ? literalValue(e, src) : fail()));
    case "Literal":
      return "regex" in node || "bigint" in node ? fail() : node.value;
    case "TemplateLiteral":
      return node.expressions.length === 0 ? node.quasis[0]!.value.cooked : fail();
    case "UnaryExpression": {
      const arg = node.argument;
      if (node.operator === "void" && arg.type === "Literal" && arg.value === 0) return undefined;
      if (arg.type !== "Literal" || typeof arg.value !== "number") return fail();
      if (node.operator === "!") return !arg.value;
      if (node.operator === "-") return -arg.value;
      return fail();
    }
    default:
      return fail();
  }
}

/** The catalog groups found in a bundle, before flattening (`catalog.ts` flattens like pi-ai). */
export interface BundleCatalogData {
  file: string;
  /** `providerKey → { <api>: { <key>: model } }`. */
  groups: Map<string, Record<string, Record<string, unknown>>>;
  /** `flattenChatModelCatalog` (pi-ai 1.x: chat models only). */
  chatOnly: boolean;
  manifest?: { schemaVersion?: number; generatedAt?: string };
}

const FLATTEN_CALL = /var [A-Z0-9_]+_MODELS\s*=\s*flatten(Chat)?ModelCatalog\("([^"]+)",\s*([\w$]+)\)/g;

/**
 * Find and parse the catalog inlined in pi's CLI bundle (`packageDir`: pi's package dir).
 * @throws when the bundle has no catalog chunk, or a literal does not parse ({@link LiteralParseError}).
 */
export function readBundleCatalogData(packageDir: string): BundleCatalogData {
  const chunks = path.join(packageDir, "dist", "bundle", "chunks");
  // the chunk with the most providers (a provider may also have a chunk of its own)
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
