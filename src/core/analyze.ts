/**
 * One call from a session file to everything pi-context shows: the session index, the model pi
 * would resume with, its context window, the settings that apply, and the inspect result.
 * Shared by the CLI and the extension.
 */

import { buildProjection, modelSelection } from "./context";
import { inspectSession, type InspectResult, type ResolvedWindow } from "./inspect";
import { readModelsConfig, readModelsStore, resolveContextWindow, type ModelInfo } from "./models";
import { SessionFile } from "./session";
import { resolveSettings, type ProjectSettingsMode, type ResolvedSettings } from "./settings";

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
}

/**
 * Analyse an already-read session with pi's rules (no I/O besides settings and models files).
 * Never throws for bad session or settings content.
 */
export function analyzeLoaded(session: SessionFile, options: AnalyzeOptions): Analysis {
  const projection = buildProjection(session, options.leafId);
  const cwd = options.cwd ?? session.cwd;
  // Settings first without a model, for defaultProvider/defaultModel; then with the model key.
  let selection: Analysis["selection"] = null;
  const branchSelection = modelSelection(projection.path);
  const base = resolveSettings({ agentDir: options.agentDir, cwd, projectSettings: options.projectSettings ?? "auto" });
  if (branchSelection) selection = { ...branchSelection, source: "session-branch" };
  else if (base.defaultProvider && base.defaultModel) selection = { provider: base.defaultProvider, modelId: base.defaultModel, source: "settings-default" };
  const settings = selection
    ? resolveSettings({ agentDir: options.agentDir, cwd, projectSettings: options.projectSettings ?? "auto", modelKey: `${selection.provider}/${selection.modelId}` })
    : base;
  const modelsConfig = readModelsConfig(options.agentDir);
  let window: ResolvedWindow;
  let model: ModelInfo | undefined;
  if (options.contextWindow !== undefined) {
    window = { value: options.contextWindow, source: "live", detail: "given by the caller" };
  } else {
    const resolved = resolveContextWindow(selection?.provider, selection?.modelId, modelsConfig, readModelsStore(options.agentDir));
    model = resolved.model;
    window = { value: resolved.value, source: resolved.source, ...(resolved.detail ? { detail: resolved.detail } : {}) };
  }
  const inspect = inspectSession(session, { settings, contextWindow: window, ...(options.leafId !== undefined ? { leafId: options.leafId } : {}) });
  const analysis: Analysis = { session, selection, window, settings, inspect };
  if (model) analysis.model = model;
  if (modelsConfig.error) analysis.modelsError = modelsConfig.error;
  return analysis;
}

/** Read a session file and analyse it. @throws the `fs` error when the file cannot be read. */
export async function analyzeSession(file: string, options: AnalyzeOptions): Promise<Analysis> {
  const session = await SessionFile.open(file);
  return analyzeLoaded(session, options);
}
