/**
 * A small builder for hand-made pi 1.6.0 session files in unit tests: each call appends one entry
 * (parent = the previous entry unless `parent` is given) in pi's shapes and key order.
 */

export interface CallSpec {
  id: string;
  name?: string;
  arguments?: Record<string, unknown>;
}

export interface AssistantSpec {
  text?: string;
  calls?: CallSpec[];
  stopReason?: string;
  /** `usage.totalTokens` (input gets the same number); 0 = all-zero usage. */
  usage?: number;
  parent?: string | null;
}

export class SessionBuilder {
  private readonly lines: string[];
  private last: string | null = null;
  private t = Date.parse("2026-01-01T00:00:00.000Z");

  constructor(cwd = "/tmp/project") {
    this.lines = [JSON.stringify({ type: "session", version: 3, id: "test-session", timestamp: this.iso(), cwd })];
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
    const content: unknown[] = [];
    if (spec.text !== undefined) content.push({ type: "text", text: spec.text });
    for (const c of spec.calls ?? [])
      content.push({ type: "toolCall", id: c.id, name: c.name ?? "read", arguments: c.arguments ?? {} });
    const total = spec.usage ?? 0;
    return this.message(
      id,
      {
        role: "assistant",
        content,
        api: "openai-completions",
        provider: "p",
        model: "m",
        usage: {
          input: total,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: total,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: spec.stopReason ?? (spec.calls?.length ? "toolUse" : "stop"),
      },
      spec.parent,
    );
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

  compaction(id: string, firstKeptEntryId: string, summary = "summary"): this {
    return this.entry(id, "compaction", { summary, firstKeptEntryId, tokensBefore: 1000 });
  }

  label(id: string, targetId: string, label: string): this {
    return this.entry(id, "label", { targetId, label });
  }

  /** The file content (header + entries, one line each, final newline). */
  jsonl(): string {
    return `${this.lines.join("\n")}\n`;
  }
}
