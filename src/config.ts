/** Typed access to the settings; every key read anywhere is declared here with its default. */

import * as vscode from "vscode";

/** Keep in sync with `contributes.configuration` in package.json. */
export interface PiContextConfig {
  agentDir: string;
  sessionDirs: string[];
  includeSubfolderSessions: boolean;
  projectSettings: "auto" | "always" | "never";
  statusBar: {
    alignment: "left" | "right";
    priority: number;
  };
  warning: {
    enabled: boolean;
    margin: number;
  };
  gauge: {
    colors: "threshold" | "piFooter";
  };
  pollIntervalMs: number;
  /** Restricted in untrusted workspaces. */
  piPath: string;
  summarizer: {
    provider: "auto" | "pi" | "openai" | "vscode-lm";
    openai: {
      /** Restricted in untrusted workspaces. */
      baseURL: string;
      model: string;
      /** 0 = unknown: requests are not fitted. */
      contextWindow: number;
      maxOutputTokens: number;
      stream: boolean;
    };
    vscodeLm: {
      vendor: string;
      family: string;
    };
  };
  compaction: {
    skipPreview: boolean;
  };
  liveSession: {
    /** Seconds; 0 = off. */
    guardSeconds: number;
  };
  liveBridge: {
    enabled: boolean;
  };
}

const SECTION = "piContext";

const PROVIDERS = ["auto", "pi", "openai", "vscode-lm"] as const;
function summarizerProvider(value: string): PiContextConfig["summarizer"]["provider"] {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as (typeof PROVIDERS)[number]) : "auto";
}

/** Falls back to defaults for missing or mistyped values. */
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
