/**
 * The user's pi's built-in model catalog, read as data (never executed). Sources, in order: pi-ai's
 * JSON data next to pi only when that pi-ai has pi's version (the `pi` executable uses its bundle's
 * copy); the bundle's copy (`bundleCatalog.ts`); the snapshot of pi 1.6.0's (`data/model-catalog.json`).
 * schemaVersion ≥ 6 keeps chat models keyed by `model.id` (a later api group wins); 3 keeps all.
 */

import { fileStamp } from "../read/stamp";
import * as fs from "node:fs";
import * as path from "node:path";
import snapshotData from "../data/model-catalog.json";
import { readBundleCatalogData } from "./bundleCatalog";
import type { PiInstall } from "./locate";
import { REFERENCE_PI_VERSION } from "./versions";
import * as l10n from "@vscode/l10n";

/** US dollars per million tokens (pi-ai `Model.cost`; optional `tiers` by input size). */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tiers?: unknown[];
}

export interface CatalogModel {
  contextWindow: number;
  /** Output limit in tokens. */
  maxTokens: number;
  name?: string;
  reasoning?: boolean;
  cost?: ModelCost;
}

export type CatalogOrigin = "pi-ai-data" | "bundle" | "snapshot";

export interface ModelCatalog {
  piVersion: string;
  origin: CatalogOrigin;
  location: string;
  /** ms since epoch (`.manifest.json` `generatedAt`), if known. */
  generatedAt: number | undefined;
  models: Map<string, CatalogModel>;
  /** Only these consult `models-store.json`. */
  providers: Set<string>;
  /** `pi 1.5.2's model catalog` or `pi-context's snapshot of pi 1.6.0's catalog`. */
  name: string;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function costOf(v: unknown): ModelCost | undefined {
  if (!isObject(v)) return undefined;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  const cost: ModelCost = {
    input: n(v.input),
    output: n(v.output),
    cacheRead: n(v.cacheRead),
    cacheWrite: n(v.cacheWrite),
  };
  if (Array.isArray(v.tiers)) cost.tiers = v.tiers;
  return cost;
}

function modelOf(m: Obj): CatalogModel {
  const model: CatalogModel = {
    contextWindow: typeof m.contextWindow === "number" ? m.contextWindow : 0,
    maxTokens: typeof m.maxTokens === "number" ? m.maxTokens : 0,
  };
  if (typeof m.name === "string") model.name = m.name;
  if (typeof m.reasoning === "boolean") model.reasoning = m.reasoning;
  const cost = costOf(m.cost);
  if (cost) model.cost = cost;
  return model;
}

/** Flatten one provider like pi-ai: chat models by `model.id` when `chatOnly`, else every entry by key. */
function flatten(provider: string, groups: unknown, chatOnly: boolean, into: Map<string, CatalogModel>): void {
  if (!isObject(groups)) return;
  for (const group of Object.values(groups)) {
    if (!isObject(group)) continue;
    for (const [key, m] of Object.entries(group)) {
      if (!isObject(m)) continue;
      if (chatOnly) {
        if (m.type !== "chat" || typeof m.id !== "string") continue;
        into.set(`${provider}/${m.id}`, modelOf(m));
      } else into.set(`${provider}/${key}`, modelOf(m));
    }
  }
}

function catalogName(version: string): string {
  return l10n.t("pi {0}'s model catalog", version);
}

function finish(
  piVersion: string,
  origin: CatalogOrigin,
  location: string,
  generatedAt: string | number | undefined,
  models: Map<string, CatalogModel>,
  name: string,
): ModelCatalog {
  const at = typeof generatedAt === "string" ? Date.parse(generatedAt) : generatedAt;
  return {
    piVersion,
    origin,
    location,
    generatedAt: at !== undefined && Number.isFinite(at) ? at : undefined,
    models,
    providers: new Set([...models.keys()].map((k) => k.slice(0, k.indexOf("/")))),
    name,
  };
}

/**
 * pi-ai's catalog from its JSON data; the provider → file map comes from the text of its import lines.
 * No pi-ai code runs. @throws when a file is missing or does not parse.
 */
export function readPiAiCatalog(piAiDir: string, piVersion: string): ModelCatalog {
  const dist = path.join(piAiDir, "dist");
  const dataDir = path.join(dist, "providers", "data");
  const manifest = JSON.parse(fs.readFileSync(path.join(dataDir, ".manifest.json"), "utf8")) as Obj;
  const generated = fs.readFileSync(path.join(dist, "models.generated.js"), "utf8");
  const start = generated.indexOf("export const MODELS = {");
  if (start < 0) throw new Error(`${path.join(dist, "models.generated.js")}: no MODELS`);
  const block = generated.slice(start, generated.indexOf("};", start));
  const moduleOf = new Map<string, string>();
  for (const m of generated.matchAll(/import \{([^}]*)\} from "\.\/providers\/([^"]+)\.models\.js"/g))
    for (const name of m[1]!.split(",")) moduleOf.set(name.trim(), m[2]!);
  const chatOnly = typeof manifest.schemaVersion === "number" && manifest.schemaVersion >= 6;
  const models = new Map<string, CatalogModel>();
  for (const [, provider, constName] of block.matchAll(/"([^"]+)": ([A-Z0-9_]+),/g)) {
    const mod = moduleOf.get(constName!);
    if (!mod) throw new Error(`models.generated.js: no import for ${constName}`);
    const modText = fs.readFileSync(path.join(dist, "providers", `${mod}.models.js`), "utf8");
    const file = /import values from "\.\/data\/([^"]+\.json)"/.exec(modText)?.[1];
    if (!file) throw new Error(`providers/${mod}.models.js: no data import`);
    flatten(provider!, JSON.parse(fs.readFileSync(path.join(dataDir, file), "utf8")), chatOnly, models);
  }
  return finish(
    piVersion,
    "pi-ai-data",
    dataDir,
    manifest.generatedAt as string | undefined,
    models,
    catalogName(piVersion),
  );
}

/** @throws when the bundle has no catalog or it does not parse. */
export function readBundleCatalog(packageDir: string, piVersion: string): ModelCatalog {
  const data = readBundleCatalogData(packageDir);
  const chatOnly = data.chatOnly || (data.manifest?.schemaVersion ?? 0) >= 6;
  const models = new Map<string, CatalogModel>();
  for (const [provider, groups] of data.groups) flatten(provider, groups, chatOnly, models);
  return finish(piVersion, "bundle", data.file, data.manifest?.generatedAt, models, catalogName(piVersion));
}

interface SnapshotFile {
  generatedFrom: string;
  generatedAt: string;
  models: Record<string, CatalogModel>;
}

let snapshot: ModelCatalog | undefined;

/** pi-context's snapshot of pi 1.6.0's catalog (`src/core/data/model-catalog.json`), the fallback. */
export function snapshotCatalog(): ModelCatalog {
  if (snapshot) return snapshot;
  const data = snapshotData as SnapshotFile;
  const version = /@(\d+\.\d+\.\d+)$/.exec(data.generatedFrom)?.[1] ?? REFERENCE_PI_VERSION;
  snapshot = finish(
    version,
    "snapshot",
    "data/model-catalog.json",
    data.generatedAt,
    new Map(Object.entries(data.models)),
    l10n.t("pi-context's snapshot of pi {0}'s catalog", version),
  );
  return snapshot;
}

export interface CatalogLookup {
  catalog: ModelCatalog;
  /** Why pi's own catalog was not used, in words. */
  problem?: string;
}

const cache = new Map<string, { stamp: string; lookup: CatalogLookup }>();

/** The catalog the user's pi uses (see the file comment), cached by file stamps. Never throws. */
export function catalogFor(install: Pick<PiInstall, "version" | "packageDir" | "piAi"> | undefined): CatalogLookup {
  if (!install) return { catalog: snapshotCatalog() };
  const piAi = install.piAi;
  const files = [path.join(install.packageDir, "package.json")];
  if (piAi) files.push(path.join(piAi.dir, "package.json"), path.join(piAi.dir, "dist/providers/data/.manifest.json"));
  const key = `${install.packageDir}\0${piAi?.dir ?? ""}`;
  const stamp = fileStamp(files);
  const hit = cache.get(key);
  if (hit && hit.stamp === stamp) return hit.lookup;
  const problems: string[] = [];
  let lookup: CatalogLookup | undefined;
  if (piAi && piAi.version === install.version) {
    try {
      lookup = { catalog: readPiAiCatalog(piAi.dir, install.version) };
    } catch (error) {
      problems.push(l10n.t("pi-ai's data: {0}", (error as Error).message));
    }
  }
  if (!lookup) {
    try {
      lookup = { catalog: readBundleCatalog(install.packageDir, install.version) };
    } catch (error) {
      problems.push(l10n.t("pi's bundle: {0}", (error as Error).message));
    }
  }
  if (!lookup || lookup.catalog.models.size === 0) {
    if (lookup) problems.push(l10n.t("pi's bundle: no models found"));
    lookup = {
      catalog: snapshotCatalog(),
      problem: l10n.t("pi {0}'s model catalog could not be read ({1})", install.version, problems.join("; ")),
    };
  }
  cache.set(key, { stamp, lookup });
  if (cache.size > 16) cache.delete(cache.keys().next().value as string);
  return lookup;
}
