/**
 * A small builder for hand-made pi 1.6.0 session files in unit tests: each call appends one entry
 * (parent = the previous entry unless `parent` is given) in pi's shapes and key order.
 */

export interface CallSpec {
  id: string;
  name?: string;
  arguments?: Record<string, unknown>;
}

/** pi's `usage` numbers; `totalTokens` defaults to the sum of the four, `cost` to {@link ZERO_COST}. */
export interface UsageSpec {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  totalTokens?: number;
  cost?: Record<string, number | boolean>;
}

export interface AssistantSpec {
  text?: string;
  calls?: CallSpec[];
  /** The whole `content` (instead of `text` + `calls`; given as undefined = no `content` key). */
  content?: unknown[];
  stopReason?: string;
  errorMessage?: string;
  /** A number n = `{ input: n, totalTokens: n }`; omitted = all-zero usage. */
  usage?: number | UsageSpec;
  /** Default "openai-completions", "p", "m". */
  api?: string;
  provider?: string;
  model?: string;
  parent?: string | null;
}

/** pi's `usage.cost` of a model without prices: all zero. */
export const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } as const;

/** pi's assistant `usage` object (key order as pi writes it). */
export function piUsage(spec: UsageSpec | number = {}): Record<string, unknown> {
  const u = typeof spec === "number" ? { input: spec } : spec;
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  const cacheRead = u.cacheRead ?? 0;
  const cacheWrite = u.cacheWrite ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: u.totalTokens ?? input + output + cacheRead + cacheWrite,
    cost: u.cost ?? { ...ZERO_COST },
  };
}

/**
 * An assistant message in pi's shape and key order (no `timestamp`: the builder adds it); the stop
 * reason defaults to "toolUse" with calls, else "stop".
 */
export function assistantMessage(spec: AssistantSpec = {}): Record<string, unknown> {
  let content = spec.content;
  if (!("content" in spec)) {
    content = [];
    if (spec.text !== undefined) content.push({ type: "text", text: spec.text });
    for (const c of spec.calls ?? [])
      content.push({ type: "toolCall", id: c.id, name: c.name ?? "read", arguments: c.arguments ?? {} });
  }
  return {
    role: "assistant",
    content,
    api: spec.api ?? "openai-completions",
    provider: spec.provider ?? "p",
    model: spec.model ?? "m",
    usage: piUsage(spec.usage),
    stopReason: spec.stopReason ?? (spec.calls?.length ? "toolUse" : "stop"),
    ...(spec.errorMessage !== undefined ? { errorMessage: spec.errorMessage } : {}),
  };
}

/** The session header's fields. */
export interface HeaderSpec {
  cwd?: string;
  id?: string;
  /** The header's ISO time (default 2026-01-01T00:00:01.000Z); each entry is one second later. */
  timestamp?: string;
}

export class SessionBuilder {
  private readonly lines: string[];
  private last: string | null = null;
  private t = Date.parse("2026-01-01T00:00:00.000Z");

  /** `header` is the cwd (default "/tmp/project") or the header's fields. */
  constructor(header: string | HeaderSpec = "/tmp/project") {
    const h = typeof header === "string" ? { cwd: header } : header;
    const id = h.id ?? "test-session";
    const cwd = h.cwd ?? "/tmp/project";
    if (h.timestamp !== undefined) this.t = Date.parse(h.timestamp) - 1000;
    this.lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: this.iso(), cwd })];
  }

  private iso(): string {
    this.t += 1000;
    return new Date(this.t).toISOString();
  }

  /** Append a raw entry (`id`, `type` and the rest; parentId/timestamp filled in unless given). */
  entry(id: string, type: string, fields: Record<string, unknown>, parent?: string | null): this {
    const parentId = parent === undefined ? this.last : parent;
    this.lines.push(JSON.stringify({ type, id, parentId, timestamp: this.iso(), ...fields }));
    this.last = id;
    return this;
  }

  message(id: string, message: Record<string, unknown>, parent?: string | null): this {
    return this.entry(id, "message", { message: { ...message, timestamp: this.t } }, parent);
  }

  system(id: string, text = "You are pi."): this {
    return this.message(id, {
      role: "system",
      content: "",
      sections: { preamble: text },
      toolsAdded: [{ name: "read", description: "Read a file", parameters: {} }],
    });
  }

  user(id: string, content: unknown, parent?: string | null): this {
    return this.message(id, { role: "user", content }, parent);
  }

  assistant(id: string, spec: AssistantSpec = {}): this {
    return this.message(id, assistantMessage(spec), spec.parent);
  }

  /** A `model_change` entry. */
  model(id: string, provider: string, modelId: string): this {
    return this.entry(id, "model_change", { provider, modelId });
  }

  result(id: string, toolCallId: string, text: string, toolName = "read", parent?: string | null): this {
    return this.message(
      id,
      { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError: false },
      parent,
    );
  }

  custom(id: string, content: unknown): this {
    return this.entry(id, "custom_message", { customType: "ext", content, display: true });
  }

  bash(id: string, command: string, output: string, excludeFromContext = false): this {
    return this.message(id, {
      role: "bashExecution",
      command,
      output,
      exitCode: 0,
      cancelled: false,
      truncated: false,
      excludeFromContext,
    });
  }

  edit(id: string, targetId: string, replacement: unknown, parent?: string | null): this {
    return this.entry(id, "context_edit", { targetId, replacement }, parent);
  }

  compaction(id: string, firstKeptEntryId: string, summary = "summary", tokensBefore = 1000): this {
    return this.entry(id, "compaction", { summary, firstKeptEntryId, tokensBefore });
  }

  label(id: string, targetId: string, label: string): this {
    return this.entry(id, "label", { targetId, label });
  }

  /** A `branch_summary` entry (pi writes one when the tree is navigated away from `fromId`). */
  branchSummary(id: string, fromId: string, summary = "summary"): this {
    return this.entry(id, "branch_summary", { fromId, summary });
  }

  /** A `session_info` entry: the session's name. */
  name(id: string, name: string): this {
    return this.entry(id, "session_info", { name });
  }

  /** Append entries written elsewhere, byte for byte (the last one's `id` becomes the parent of the next). */
  append(...entries: object[]): this {
    for (const e of entries) {
      this.lines.push(JSON.stringify(e));
      const id = (e as { id?: unknown }).id;
      if (typeof id === "string") this.last = id;
    }
    return this;
  }

  /** The file content (header + entries, one line each, final newline). */
  jsonl(): string {
    return `${this.lines.join("\n")}\n`;
  }
}
