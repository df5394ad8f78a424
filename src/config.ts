/**
 * Typed access to pi-context's settings (`contributes.configuration` in package.json).
 * Every key read anywhere in the extension is declared here, with its default.
 */

import * as vscode from "vscode";

/** All pi-context settings, typed. Keep in sync with `contributes.configuration` in package.json. */
export interface PiContextConfig {
  /** pi's agent dir; empty = `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
  agentDir: string;
  /** Extra folders to look for session files in (absolute, or relative to the workspace folder). */
  sessionDirs: string[];
  /** Also show sessions started in sub-folders of a workspace folder. */
  includeSubfolderSessions: boolean;
  /** How to treat `<cwd>/.pi/settings.json`: like pi (`auto`, from trust.json), or always/never. */
  projectSettings: "auto" | "always" | "never";
  statusBar: {
    alignment: "left" | "right";
    priority: number;
  };
  warning: {
    /** Notify when the context comes within `margin` tokens of the auto-compaction threshold. */
    enabled: boolean;
    margin: number;
  };
  gauge: {
    /** Colours by pi's threshold (default) or like pi's footer (> 70 % / > 90 %). */
    colors: "threshold" | "piFooter";
  };
  /** Polling interval (ms) used when file-system events are unavailable. */
  pollIntervalMs: number;
  /** Setting `piContext.pi.path`: the user's pi (an executable, a launcher or pi's package dir); empty = find it. Restricted in untrusted workspaces. */
  piPath: string;
  /** The LLM that writes compaction and branch summaries (`src/summarizers/`). */
  summarizer: {
    /**
     * `auto` (default): the user's own pi when one is found and no OpenAI-compatible summarizer is
     * configured (see `summarizers/select.ts`), else `openai`; `pi`: always the user's pi.
     */
    provider: "auto" | "pi" | "openai" | "vscode-lm";
    openai: {
      /** API base URL; empty = OpenAI. Restricted in untrusted workspaces. */
      baseURL: string;
      model: string;
      /** The model's context window in tokens (0 = unknown: requests are not fitted). */
      contextWindow: number;
      maxOutputTokens: number;
      stream: boolean;
    };
    vscodeLm: {
      /** `vscode.lm.selectChatModels` selector; empty = any. */
      vendor: string;
      family: string;
    };
  };
  compaction: {
    /** Summarize right away, without the preview step. */
    skipPreview: boolean;
  };
  liveSession: {
    /** Refuse to write to a session file written less than this many seconds ago (0 = off). */
    guardSeconds: number;
  };
  liveBridge: {
    /** Use running pi processes' live bridges (gauge numbers, Compact / Switch run in pi). */
    enabled: boolean;
  };
}

const SECTION = "piContext";

const PROVIDERS = ["auto", "pi", "openai", "vscode-lm"] as const;
function summarizerProvider(value: string): PiContextConfig["summarizer"]["provider"] {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as (typeof PROVIDERS)[number]) : "auto";
}

/** Read the current settings (falls back to defaults for missing or mistyped values). */
export function readConfig(scope?: vscode.ConfigurationScope): PiContextConfig {
  const c = vscode.workspace.getConfiguration(SECTION, scope);
  const str = (key: string, fallback: string): string => {
    const v = c.get<unknown>(key);
    return typeof v === "string" ? v : fallback;
  };
  const num = (key: string, fallback: number): number => {
    const v = c.get<unknown>(key);
    return typeof v === "number" && Number.isFinite(v) ? v : fallback;
  };
  const bool = (key: string, fallback: boolean): boolean => {
    const v = c.get<unknown>(key);
    return typeof v === "boolean" ? v : fallback;
  };
  const projectSettings = str("projectSettings", "auto");
  const alignment = str("statusBar.alignment", "left");
  const dirs = c.get<unknown>("sessionDirs");
  return {
    agentDir: str("agentDir", ""),
    sessionDirs: Array.isArray(dirs) ? dirs.filter((d): d is string => typeof d === "string") : [],
    includeSubfolderSessions: bool("includeSubfolderSessions", true),
    projectSettings: projectSettings === "always" || projectSettings === "never" ? projectSettings : "auto",
    statusBar: {
      alignment: alignment === "right" ? "right" : "left",
      priority: num("statusBar.priority", 100),
    },
    warning: {
      enabled: bool("warning.enabled", false),
      margin: num("warning.margin", 10000),
    },
    gauge: { colors: str("gauge.colors", "threshold") === "piFooter" ? "piFooter" : "threshold" },
    pollIntervalMs: Math.max(100, num("pollIntervalMs", 1000)),
    piPath: str("pi.path", "").trim(),
    summarizer: {
      provider: summarizerProvider(str("summarizer.provider", "auto")),
      openai: {
        baseURL: str("summarizer.openai.baseURL", "").trim(),
        model: str("summarizer.openai.model", "gpt-4o-mini").trim(),
        contextWindow: Math.max(0, Math.floor(num("summarizer.openai.contextWindow", 128000))),
        maxOutputTokens: Math.max(256, Math.floor(num("summarizer.openai.maxOutputTokens", 8192))),
        stream: bool("summarizer.openai.stream", true),
      },
      vscodeLm: {
        vendor: str("summarizer.vscodeLm.vendor", "").trim(),
        family: str("summarizer.vscodeLm.family", "").trim(),
      },
    },
    compaction: { skipPreview: bool("compaction.skipPreview", false) },
    liveSession: { guardSeconds: Math.max(0, num("liveSession.guardSeconds", 30)) },
    liveBridge: { enabled: bool("liveBridge.enabled", true) },
  };
}
