/** pi 1.6.0's settings for one session (`settings-manager.js`, `trust-manager.js`), each value with its source. */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isNetworkPath } from "../../shared/untrusted";

/** `override` = `compaction.modelOverrides["provider/model"]`. */
export type ValueSource = "default" | "global" | "project" | "override";

/** `value` is undefined only when the setting is invalid (see `error`). */
export interface Sourced<T> {
  value: T | undefined;
  source: ValueSource;
  file?: string;
  /** E.g. `compaction.modelOverrides["a/b"].reserveTokens`. */
  key: string;
  /** pi's validation error, when pi would throw reading this setting. */
  error?: string;
}

export interface SettingsProblem {
  scope: "global" | "project" | "trust";
  file: string;
  key?: string;
  message: string;
}

/** pi's defaults (`SETTINGS_DEFAULTS`). */
export const DEFAULT_RESERVE_TOKENS = 16384;
export const DEFAULT_KEEP_RECENT_TOKENS = 20000;
export const DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS = 16384;

/** `auto` decides like pi from `trust.json` and `defaultProjectTrust`. */
export type ProjectSettingsMode = "auto" | "always" | "never";

/** As far as it can be known outside a running pi. */
export interface ProjectTrust {
  trusted: boolean;
  reason:
    "no-project-settings" | "no-project-resources" | "trust-file" | "default-project-trust" | "undecided" | "forced";
  trustPath?: string;
}

export interface ResolvedSettings {
  agentDir: string;
  cwd: string | undefined;
  globalFile: string;
  projectFile: string | undefined;
  projectTrust: ProjectTrust;
  projectApplied: boolean;
  compaction: {
    enabled: Sourced<boolean>;
    reserveTokens: Sourced<number>;
    keepRecentTokens: Sourced<number>;
  };
  branchSummary: {
    reserveTokens: Sourced<number>;
    skipPrompt: Sourced<boolean>;
  };
  /** Relative to cwd. */
  sessionDir?: string;
  defaultProvider?: string;
  defaultModel?: string;
  problems: SettingsProblem[];
}

type Obj = Record<string, unknown>;

function isMergeable(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** pi's `deepMergeObjects`: plain objects merge key by key; arrays/scalars replace; `undefined` skipped. */
export function deepMerge(base: Obj, overrides: Obj): Obj {
  const result: Obj = { ...base };
  for (const key of Object.keys(overrides)) {
    const value = overrides[key];
    if (value === undefined) continue;
    const baseValue = base[key];
    result[key] = isMergeable(baseValue) && isMergeable(value) ? deepMerge(baseValue, value) : value;
  }
  return result;
}

export function expandHome(p: string, home = os.homedir()): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** pi's `getAgentDir`: `$PI_CODING_AGENT_DIR` (tilde-expanded) else `~/.pi/agent`. */
export function getAgentDir(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const fromEnv = env.PI_CODING_AGENT_DIR;
  if (fromEnv) return path.resolve(expandHome(fromEnv, home));
  return path.join(home, ".pi", "agent");
}

interface LoadedFile {
  settings: Obj;
  exists: boolean;
  error?: string;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Like pi (`JSON.parse(stripBom(content))`); a parse error yields `{}` and the error. */
export function readSettingsFile(file: string): LoadedFile {
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { settings: {}, exists: false };
    return { settings: {}, exists: true, error: `Failed to read ${file}: ${(error as Error).message}` };
  }
  if (!content) return { settings: {}, exists: true };
  try {
    const parsed: unknown = JSON.parse(stripBom(content));
    if (!isMergeable(parsed))
      return { settings: {}, exists: true, error: `Invalid settings in ${file}: expected a JSON object` };
    return { settings: parsed, exists: true };
  } catch (error) {
    return { settings: {}, exists: true, error: `Failed to parse ${file}: ${(error as Error).message}` };
  }
}

const TRUST_REQUIRING = [
  "settings.json",
  "mcp.json",
  "extensions",
  "skills",
  "prompts",
  "themes",
  "SYSTEM.md",
  "APPEND_SYSTEM.md",
];

function canonical(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

function pathKey(p: string): string {
  const resolved = path.resolve(p);
  return process.platform === "win32" ? resolved.toLowerCase() : resolved;
}

export function hasTrustRequiringProjectResources(cwd: string, home = os.homedir()): boolean {
  const userSkills = path.join(canonical(path.resolve(home)), ".agents", "skills");
  let current = canonical(path.resolve(cwd));
  const configDir = path.join(current, ".pi");
  if (TRUST_REQUIRING.some((entry) => fs.existsSync(path.join(configDir, entry)))) return true;
  for (;;) {
    const skills = path.join(current, ".agents", "skills");
    if (pathKey(skills) !== pathKey(userSkills) && fs.existsSync(skills)) return true;
    const parent = path.dirname(current);
    if (parent === current) return false;
    current = parent;
  }
}

/** pi's `findNearestTrustEntry`: the decision, null, or an error message for a broken trust file. */
export function readTrustDecision(
  agentDir: string,
  cwd: string,
): { decision: boolean; path: string } | null | { error: string } {
  const file = path.join(agentDir, "trust.json");
  let data: Obj;
  try {
    const content = fs.readFileSync(file, "utf8");
    const parsed: unknown = JSON.parse(stripBom(content));
    if (!isMergeable(parsed)) return { error: `Invalid trust store ${file}: expected an object` };
    data = parsed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return { error: `Failed to read trust store ${file}: ${(error as Error).message}` };
  }
  let current = canonical(path.resolve(cwd));
  for (;;) {
    for (const key of Object.keys(data)) {
      if (pathKey(key) !== pathKey(current)) continue;
      const value = data[key];
      if (value === true || value === false) return { decision: value, path: key };
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

export interface ResolveSettingsOptions {
  agentDir: string;
  /** Header `cwd`; project settings live in `<cwd>/.pi/settings.json`. */
  cwd?: string;
  modelKey?: string;
  projectSettings?: ProjectSettingsMode;
  home?: string;
}

/** Never throws for bad files: problems go to `problems` and the affected values. */
export function resolveSettings(options: ResolveSettingsOptions): ResolvedSettings {
  const agentDir = options.agentDir;
  const globalFile = path.join(agentDir, "settings.json");
  const problems: SettingsProblem[] = [];
  const global = readSettingsFile(globalFile);
  if (global.error) problems.push({ scope: "global", file: globalFile, message: global.error });

  let cwd = options.cwd;
  if (cwd && isNetworkPath(cwd, process.platform)) {
    // Windows would connect to that server (and offer the user's credentials) to look for the file
    problems.push({
      scope: "project",
      file: path.join(cwd, ".pi", "settings.json"),
      message: `not read: the session's folder ${cwd} is on another machine (a network path); Pi Context does not read project settings from there, the numbers use the global settings`,
    });
    cwd = undefined;
  }
  const projectFile = cwd ? path.join(cwd, ".pi", "settings.json") : undefined;
  const trust = decideTrust(agentDir, cwd, options.projectSettings ?? "auto", global.settings, problems, options.home);
  let project: LoadedFile = { settings: {}, exists: false };
  if (projectFile && trust.trusted) {
    project = readSettingsFile(projectFile);
    if (project.error) problems.push({ scope: "project", file: projectFile, message: project.error });
  }
  const merged = deepMerge(global.settings, project.settings);

  const scopeOf = (get: (s: Obj) => unknown): { source: ValueSource; file?: string } => {
    if (get(project.settings) !== undefined) return { source: "project", file: projectFile! };
    if (get(global.settings) !== undefined) return { source: "global", file: globalFile };
    return { source: "default" };
  };
  const sub = (s: Obj, key: string): Obj | undefined => {
    const v = s[key];
    return isMergeable(v) ? v : undefined;
  };

  const compaction = sub(merged, "compaction");
  const enabledRaw = compaction?.enabled;
  const enabled: Sourced<boolean> = {
    value: (enabledRaw ?? true) as boolean,
    key: "compaction.enabled",
    ...scopeOf((s) => sub(s, "compaction")?.enabled),
  };

  const tokenSetting = (field: "reserveTokens" | "keepRecentTokens", fallback: number): Sourced<number> => {
    const ordinary = compaction?.[field];
    const ordinaryScope = scopeOf((s) => sub(s, "compaction")?.[field]);
    const key = `compaction.${field}`;
    if (ordinary !== undefined && !isNonNegativeSafeInteger(ordinary)) {
      const error = `Invalid compaction.${field} setting: ${String(ordinary)}. Expected a non-negative safe integer.`;
      problems.push({
        scope: ordinaryScope.source === "project" ? "project" : "global",
        file: ordinaryScope.file ?? globalFile,
        key,
        message: error,
      });
      return { value: undefined, key, error, ...ordinaryScope };
    }
    const modelKey = options.modelKey;
    const overrides = compaction?.modelOverrides;
    const entry = modelKey !== undefined && overrides != null ? (overrides as Obj)[modelKey] : undefined;
    const overrideKey = `compaction.modelOverrides[${JSON.stringify(modelKey)}]`;
    const overrideScope = scopeOf((s) => {
      const o = sub(s, "compaction")?.modelOverrides;
      return modelKey !== undefined && o && typeof o === "object" ? (o as Obj)[modelKey] : undefined;
    });
    if (entry !== undefined && !isMergeable(entry)) {
      const error = `Invalid compaction.modelOverrides["${modelKey}"] setting: ${String(entry)}. Expected an object.`;
      problems.push({
        scope: overrideScope.source === "project" ? "project" : "global",
        file: overrideScope.file ?? globalFile,
        key: overrideKey,
        message: error,
      });
      return { value: undefined, key: overrideKey, error, ...overrideScope };
    }
    const override = isMergeable(entry) ? entry[field] : undefined;
    if (override !== undefined && !isNonNegativeSafeInteger(override)) {
      const error = `Invalid compaction.modelOverrides["${modelKey}"].${field} setting: ${String(override)}. Expected a non-negative safe integer.`;
      const fieldScope = scopeOf((s) => {
        const o = sub(s, "compaction")?.modelOverrides;
        const e = modelKey !== undefined && o && typeof o === "object" ? (o as Obj)[modelKey] : undefined;
        return isMergeable(e) ? e[field] : undefined;
      });
      problems.push({
        scope: fieldScope.source === "project" ? "project" : "global",
        file: fieldScope.file ?? globalFile,
        key: `${overrideKey}.${field}`,
        message: error,
      });
      return { value: undefined, key: `${overrideKey}.${field}`, error, ...fieldScope };
    }
    if (override !== undefined) {
      const fieldScope = scopeOf((s) => {
        const o = sub(s, "compaction")?.modelOverrides;
        const e = modelKey !== undefined && o && typeof o === "object" ? (o as Obj)[modelKey] : undefined;
        return isMergeable(e) ? e[field] : undefined;
      });
      return {
        value: override as number,
        source: "override",
        key: `${overrideKey}.${field}`,
        ...(fieldScope.file ? { file: fieldScope.file } : {}),
      };
    }
    if (ordinary !== undefined) return { value: ordinary as number, key, ...ordinaryScope };
    return { value: fallback, source: "default", key };
  };

  const branchSummary = sub(merged, "branchSummary");
  const resolved: ResolvedSettings = {
    agentDir,
    cwd,
    globalFile,
    projectFile,
    projectTrust: trust,
    projectApplied: project.exists && !project.error,
    compaction: {
      enabled,
      reserveTokens: tokenSetting("reserveTokens", DEFAULT_RESERVE_TOKENS),
      keepRecentTokens: tokenSetting("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
    },
    branchSummary: {
      reserveTokens: {
        value: (branchSummary?.reserveTokens ?? DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS) as number,
        key: "branchSummary.reserveTokens",
        ...scopeOf((s) => sub(s, "branchSummary")?.reserveTokens),
      },
      skipPrompt: {
        value: (branchSummary?.skipPrompt ?? false) as boolean,
        key: "branchSummary.skipPrompt",
        ...scopeOf((s) => sub(s, "branchSummary")?.skipPrompt),
      },
    },
    problems,
  };
  if (typeof merged.sessionDir === "string") resolved.sessionDir = merged.sessionDir;
  if (typeof merged.defaultProvider === "string") resolved.defaultProvider = merged.defaultProvider;
  if (typeof merged.defaultModel === "string") resolved.defaultModel = merged.defaultModel;
  return resolved;
}

function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function decideTrust(
  agentDir: string,
  cwd: string | undefined,
  mode: ProjectSettingsMode,
  globalSettings: Obj,
  problems: SettingsProblem[],
  home?: string,
): ProjectTrust {
  if (mode === "always") return { trusted: true, reason: "forced" };
  if (mode === "never" || !cwd) return { trusted: false, reason: "forced" };
  // Without a project settings file trust does not change any value we resolve.
  if (!fs.existsSync(path.join(cwd, ".pi", "settings.json"))) return { trusted: false, reason: "no-project-settings" };
  if (!hasTrustRequiringProjectResources(cwd, home)) return { trusted: true, reason: "no-project-resources" };
  const decision = readTrustDecision(agentDir, cwd);
  if (decision && "error" in decision) {
    problems.push({ scope: "trust", file: path.join(agentDir, "trust.json"), message: decision.error });
  } else if (decision) {
    return { trusted: decision.decision, reason: "trust-file", trustPath: decision.path };
  }
  const fallback = globalSettings.defaultProjectTrust;
  if (fallback === "always") return { trusted: true, reason: "default-project-trust" };
  if (fallback === "never") return { trusted: false, reason: "default-project-trust" };
  return { trusted: false, reason: "undecided" };
}

/** Invalid values fall back to pi's defaults. */
export function compactionSettingsOf(resolved: ResolvedSettings): {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
} {
  return {
    enabled: resolved.compaction.enabled.value ?? true,
    reserveTokens: resolved.compaction.reserveTokens.value ?? DEFAULT_RESERVE_TOKENS,
    keepRecentTokens: resolved.compaction.keepRecentTokens.value ?? DEFAULT_KEEP_RECENT_TOKENS,
  };
}
