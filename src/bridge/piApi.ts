/** The part of pi 1.6.0's extension API the bridge uses. Types only: only `piExtension.ts` imports pi. */

/** A pi session entry, as far as the bridge reads it. */
export interface PiEntry {
  type: string;
  id: string;
  parentId: string | null;
  message?: { role?: string; content?: unknown; toolCallId?: string };
  targetId?: string;
  replacement?: unknown;
}

/** A message of pi's projection, as far as the cut reads it. */
export interface PiMessage {
  role?: string;
  content?: unknown;
  nestedCalls?: { calls?: { name?: unknown; arguments?: unknown }[] };
}

/** pi's `ProjectedSessionEntry`. */
export interface PiProjectedEntry {
  sourceEntry: PiEntry & { fromHook?: boolean; details?: unknown; summary?: string };
  messages: PiMessage[];
}

/** pi's `SessionManager.appendContextEdit`: typed away from extensions, present at runtime. */
export type PiAppendContextEdit = (targetId: string, replacement: { content: string | unknown[] } | null) => string;

/** pi's `ExtensionContext` (subset). */
export interface PiContext {
  readonly sessionManager: {
    getSessionFile(): string | undefined;
    getSessionId(): string;
    getLeafId(): string | null;
    getEntries(): PiEntry[];
    getCwd(): string;
    getEntry(id: string): PiEntry | undefined;
    getBranch(): PiEntry[];
    buildSessionProjection(): { entries: PiProjectedEntry[] };
  };
  /** `cost`: US dollars per million tokens. */
  readonly model: { provider: string; id: string; contextWindow?: number; cost?: unknown } | undefined;
  readonly thinkingLevel?: string;
  readonly hasUI?: boolean;
  readonly ui?: { notify(message: string, type?: "info" | "warning" | "error"): void };
  isIdle(): boolean;
  abort(): void;
  getContextUsage(): { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
  compact(options?: {
    customInstructions?: string;
    onComplete?: (result: PiCompactionResult) => void;
    onError?: (error: Error) => void;
  }): void;
}

/** pi's `ExtensionCommandContext` (subset). */
export interface PiCommandContext extends PiContext {
  navigateTree(
    targetId: string,
    options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean }>;
}

/** pi's `CompactionResult`. */
export interface PiCompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
}

/** pi's `ExtensionAPI` (subset). */
export interface PiApi {
  on(event: string, handler: (event: never, ctx: PiContext) => unknown): void;
  registerCommand(
    name: string,
    options: { description?: string; handler: (args: string, ctx: PiCommandContext) => Promise<void> | void },
  ): void;
  sendUserMessage(
    content: string,
    options?: { expandPromptTemplates?: boolean; deliverAs?: "steer" | "followUp" },
  ): void;
  setLabel(entryId: string, label: string | undefined): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  getSettings(): Record<string, unknown>;
  getCommands(): { name: string; source?: string; sourceInfo?: { path?: string } }[];
}

/** What the bridge needs from its host (pi's package, given by `piExtension.ts`). */
export interface BridgeDeps {
  piVersion: string;
  agentDir(): string;
  /** Throws pi's validation errors. */
  settingsFor(
    settings: Record<string, unknown>,
    model: PiContext["model"],
  ): {
    compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
    branchSummary: { reserveTokens: number; skipPrompt: boolean };
  };
  /** stderr only when asked: stdout belongs to pi's RPC protocol. */
  log?(message: string): void;
}
