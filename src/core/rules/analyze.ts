/**
 * One call from a session file to everything pi-context shows: the session index, the model pi
 * would resume with, its context window (from the user's pi's catalog), the settings that apply,
 * and the inspect result. Shared by the CLI and the extension.
 */

import { fileStamp } from "../read/stamp";
import * as path from "node:path";
import { buildProjection, modelSelection, type Projection } from "./context";
import { inspectSession, piProjection, type InspectResult, type ResolvedWindow } from "./inspect";
import { piLeafView } from "./piLeaf";
import {
  readModelsConfig,
  readModelsStore,
  resolveContextWindow,
  type ModelInfo,
  type ModelsConfig,
  type ModelsStore,
} from "./models";
import type { SessionFile } from "../read/session";
import { openSession } from "../read/store";
import { priceLookup, type PriceLookup } from "./cost";
import { NO_USER_PI, piReport, type UserPi } from "../pi/userPi";
import {
  resolveSettings,
  type ProjectSettingsMode,
  type ResolveSettingsOptions,
  type ResolvedSettings,
} from "./settings";

/**
 * Settings and models files are re-read only when one of them changed (size or mtime), so that an
 * appended entry costs a few `stat` calls rather than re-parsing every configuration file.
 */
const configCache = new Map<string, { stamp: string; value: unknown }>();

function cached<T>(key: string, stamp: string, compute: () => T): T {
  const hit = configCache.get(key);
  if (hit && hit.stamp === stamp) return hit.value as T;
  const value = compute();
  configCache.set(key, { stamp, value });
  if (configCache.size > 64) configCache.delete(configCache.keys().next().value as string);
  return value;
}

/** The stamp of the files {@link resolveSettings} reads for `agentDir` and `cwd`. */
function settingsStamp(agentDir: string, cwd: string | undefined): string {
  const files = [path.join(agentDir, "settings.json"), path.join(agentDir, "trust.json")];
  if (cwd) files.push(path.join(cwd, ".pi", "settings.json"));
  return fileStamp(files);
}

/** @param stamp {@link settingsStamp} of `options.agentDir` and `options.cwd`, taken once per analysis. */
function cachedSettings(options: ResolveSettingsOptions, stamp: string): ResolvedSettings {
  return cached(
    `settings\0${options.agentDir}\0${options.cwd ?? ""}\0${options.projectSettings ?? "auto"}\0${options.modelKey ?? ""}`,
    stamp,
    () => resolveSettings(options),
  );
}

function cachedModels(agentDir: string, pi: UserPi): { config: ModelsConfig; store: ModelsStore } {
  const positive = pi.rules.modelsJsonPositiveLimits;
  return cached(
    `models\0${agentDir}\0${positive}`,
    fileStamp([path.join(agentDir, "models.json"), path.join(agentDir, "models-store.json")]),
    () => ({ config: readModelsConfig(agentDir, pi.rules), store: readModelsStore(agentDir) }),
  );
}

/** Options for {@link analyzeSession}. */
export interface AnalyzeOptions {
  agentDir: string;
  /** Working directory for project settings (default: the session header's `cwd`). */
  cwd?: string;
  projectSettings?: ProjectSettingsMode;
  /** Leaf to analyse (default: the file's leaf). */
  leafId?: string | null;
  /** Use this context window instead of resolving the model's (e.g. pi's live value). */
  contextWindow?: number;
  /** The user's pi (its rules and catalog; `pi/userPi.ts`). Default: none found — the snapshot of pi 1.6.0's catalog. */
  pi?: UserPi;
}

/** The result of {@link analyzeSession}. */
export interface Analysis {
  session: SessionFile;
  selection: { provider: string; modelId: string; source: "session-branch" | "settings-default" } | null;
  model?: ModelInfo;
  window: ResolvedWindow;
  settings: ResolvedSettings;
  inspect: InspectResult;
  modelsError?: string;
  /** Prices of any `provider/model`, resolved like its window (catalog → models-store.json → models.json). */
  prices: PriceLookup;
  /** The pi the numbers follow (its rules and catalog). */
  pi: UserPi;
  /** The context the numbers are for: pi's at an odd last line (`piLeaf.ts`); see {@link analysisProjection}. */
  projection?: Projection;
}

/**
 * The projection an analysis' numbers are for — the file's leaf, or pi's own context when the
 * file's last line is not an entry with a string id — for views that split those numbers up.
 */
export function analysisProjection(analysis: Analysis): Projection {
  return analysis.projection ?? buildProjection(analysis.session, analysis.inspect.leafId);
}

/**
 * Analyse an already-read session with pi's rules (no I/O besides settings and models files).
 * Never throws for bad session or settings content.
 */
export function analyzeLoaded(session: SessionFile, options: AnalyzeOptions): Analysis {
  // the file's leaf is pi's unless its last line is not an entry with a string id (piLeaf.ts)
  const piLeaf = options.leafId === undefined ? piLeafView(session) : undefined;
  const projection = piLeaf ? piProjection(piLeaf) : buildProjection(session, options.leafId);
  const cwd = options.cwd ?? session.cwd;
  // Settings first without a model, for defaultProvider/defaultModel; then with the model key.
  let selection: Analysis["selection"] = null;
  const branchSelection = modelSelection(projection.path);
  // One stat per settings file for both lookups below (an append → gauge update pays only these).
  const stamp = settingsStamp(options.agentDir, cwd);
  const base = cachedSettings(
    { agentDir: options.agentDir, ...(cwd ? { cwd } : {}), projectSettings: options.projectSettings ?? "auto" },
    stamp,
  );
  if (branchSelection) selection = { ...branchSelection, source: "session-branch" };
  else if (base.defaultProvider && base.defaultModel)
    selection = { provider: base.defaultProvider, modelId: base.defaultModel, source: "settings-default" };
  const settings = selection
    ? cachedSettings(
        {
          agentDir: options.agentDir,
          ...(cwd ? { cwd } : {}),
          projectSettings: options.projectSettings ?? "auto",
          modelKey: `${selection.provider}/${selection.modelId}`,
        },
        stamp,
      )
    : base;
  const pi = options.pi ?? NO_USER_PI;
  const { config: modelsConfig, store: modelsStore } = cachedModels(options.agentDir, pi);
  let window: ResolvedWindow;
  let model: ModelInfo | undefined;
  if (options.contextWindow !== undefined) {
    window = { value: options.contextWindow, source: "given", detail: "given by the caller" };
  } else {
    const resolved = resolveContextWindow(
      selection?.provider,
      selection?.modelId,
      modelsConfig,
      modelsStore,
      pi.catalog,
      pi.rules,
    );
    model = resolved.model;
    window = {
      value: resolved.value,
      source: resolved.source,
      ...(resolved.detail ? { detail: resolved.detail } : {}),
      ...(resolved.file ? { file: resolved.file } : {}),
      ...(resolved.where ? { where: resolved.where } : {}),
      ...(resolved.catalog ? { catalog: resolved.catalog } : {}),
    };
  }
  const prices = priceLookup(
    (provider, modelId) =>
      resolveContextWindow(provider, modelId, modelsConfig, modelsStore, pi.catalog, pi.rules).model,
  );
  const inspect = inspectSession(session, {
    settings,
    contextWindow: window,
    prices,
    pi: piReport(pi),
    rules: pi.rules,
    projection,
    ...(options.leafId !== undefined ? { leafId: options.leafId } : {}),
    ...(piLeaf ? { piLeaf } : {}),
  });
  const analysis: Analysis = { session, selection, window, settings, inspect, prices, pi, projection };
  if (model) analysis.model = model;
  if (modelsConfig.error) analysis.modelsError = modelsConfig.error;
  return analysis;
}

/** Read a session file and analyse it. @throws the `fs` error when the file cannot be read. */
export async function analyzeSession(file: string, options: AnalyzeOptions): Promise<Analysis> {
  const session = await openSession(file);
  return analyzeLoaded(session, options);
}
