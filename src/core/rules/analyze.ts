/** A session file to everything pi-context shows (model, window, settings, inspect); shared by CLI and extension. */

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

/** Config files are re-parsed only when one changed (size or mtime): an append costs a few `stat` calls. */
const configCache = new Map<string, { stamp: string; value: unknown }>();

function cached<T>(key: string, stamp: string, compute: () => T): T {
  const hit = configCache.get(key);
  if (hit && hit.stamp === stamp) return hit.value as T;
  const value = compute();
  configCache.set(key, { stamp, value });
  if (configCache.size > 64) configCache.delete(configCache.keys().next().value as string);
  return value;
}

function settingsStamp(agentDir: string, cwd: string | undefined): string {
  const files = [path.join(agentDir, "settings.json"), path.join(agentDir, "trust.json")];
  if (cwd) files.push(path.join(cwd, ".pi", "settings.json"));
  return fileStamp(files);
}

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

export interface AnalyzeOptions {
  agentDir: string;
  /** Default: the session header's `cwd`. */
  cwd?: string;
  projectSettings?: ProjectSettingsMode;
  leafId?: string | null;
  /** Overrides the model's resolved window (e.g. pi's live value). */
  contextWindow?: number;
  /** The user's pi (`pi/userPi.ts`); default: the snapshot of pi 1.6.0's catalog. */
  pi?: UserPi;
}

export interface Analysis {
  session: SessionFile;
  selection: { provider: string; modelId: string; source: "session-branch" | "settings-default" } | null;
  model?: ModelInfo;
  window: ResolvedWindow;
  settings: ResolvedSettings;
  inspect: InspectResult;
  modelsError?: string;
  /** Resolved like the window: catalog → models-store.json → models.json. */
  prices: PriceLookup;
  pi: UserPi;
  /** pi's context at an odd last line (`piLeaf.ts`); see {@link analysisProjection}. */
  projection?: Projection;
}

/** The projection the numbers are for: the file's leaf, or pi's own context at an odd last line. */
export function analysisProjection(analysis: Analysis): Projection {
  return analysis.projection ?? buildProjection(analysis.session, analysis.inspect.leafId);
}

/** Analyses a read session with pi's rules (I/O: settings and models files only); never throws for bad content. */
export function analyzeLoaded(session: SessionFile, options: AnalyzeOptions): Analysis {
  const piLeaf = options.leafId === undefined ? piLeafView(session) : undefined;
  const projection = piLeaf ? piProjection(piLeaf) : buildProjection(session, options.leafId);
  const cwd = options.cwd ?? session.cwd;
  // Settings first without a model, for defaultProvider/defaultModel; then with the model key.
  let selection: Analysis["selection"] = null;
  const branchSelection = modelSelection(projection.path);
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

/** @throws the `fs` error when the file cannot be read. */
export async function analyzeSession(file: string, options: AnalyzeOptions): Promise<Analysis> {
  const session = await openSession(file);
  return analyzeLoaded(session, options);
}
