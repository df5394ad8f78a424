/**
 * Deterministic generator of large pi 1.6.0 session files for the benchmark (same arguments →
 * byte-identical file). Modelled on the shape of `test/fixtures/cases/18-large-session-performance/`:
 * header, model/thinking changes, a persisted system message, turns of user → assistant (thinking +
 * tool calls) → tool results → answer, usage growing with the context, 3 compactions, 3 abandoned
 * branches each followed by a branch summary, labels. Two flavours:
 *  - `image`: many tool results carry base64 screenshots (80–600 kB), the bytes pi counts as 1200 tokens;
 *  - `text`: tool results carry code, logs, JSON with escapes, tabs and non-ASCII (é, 日本語, 😀).
 *
 *   node out/test/bench/generate.js <out.jsonl> <sizeMB> <image|text> [seed]
 */

import * as fs from "node:fs";

export type Flavour = "image" | "text";

export function generateSession(
  outPath: string,
  sizeMB: number,
  flavour: Flavour,
  seed = 20261130,
): { bytes: number; entries: number } {
  const target = Math.round(sizeMB * 1024 * 1024);
  let state = seed >>> 0;
  const rand = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;
  const used = new Set<string>();
  const newId = (): string => {
    for (;;) {
      const id = Math.floor(rand() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
  let clock = Date.UTC(2026, 9, 1, 9, 0, 0);
  const tick = (): number => (clock += int(50, 4000));
  const iso = (ms: number): string => new Date(ms).toISOString();

  const fd = fs.openSync(outPath, "w");
  let bytes = 0;
  let entries = 0;
  const write = (o: object): void => {
    const line = `${JSON.stringify(o)}\n`;
    fs.writeSync(fd, line);
    bytes += Buffer.byteLength(line);
    if ((o as { type: string }).type !== "session") entries++;
  };

  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const base64 = (n: number): string => {
    const chunk = Array.from({ length: 4096 }, () => B64[int(0, 63)]).join("");
    return chunk.repeat(Math.ceil(n / 4096)).slice(0, n);
  };
  const CODE = [
    'export function handle(req: Request): Response {\n\tconst body = JSON.parse(req.body) as { "id": string };\n\treturn new Response(`ok ${body.id}`);\n}\n',
    'const s = "path\\\\to\\\\file"; // Windows path\nconsole.log("caf\u00e9 \u65e5\u672c\u8a9e \ud83d\ude00");\n',
    '{"level":"info","msg":"request done","ms":12,"path":"/api/items?id=42","ua":"Mozilla/5.0 (X11; Linux x86_64)"}\n',
    "FAIL src/cart.test.ts\n  \u25cf cart \u203a totals \u203a adds tax\n\n    expect(received).toBe(expected)\n\n    Expected: 107.5\n    Received: 100\n",
    "\tat Object.<anonymous> (/home/dev/webshop/src/cart.ts:42:13)\n\tat Module._compile (node:internal/modules/cjs/loader:1554:14)\n",
  ];
  const textBlob = (n: number): string => {
    let out = "";
    while (out.length < n) out += pick(CODE);
    return out.slice(0, n);
  };
  const FILES = [
    "src/cart.ts",
    "src/api.ts",
    "src/db/schema.ts",
    "README.md",
    "test/cart.test.ts",
    "src/ui/Checkout.tsx",
    "docs/ops.md",
  ];

  const usageOf = (total: number, output: number): object => ({
    input: 3,
    output,
    cacheRead: Math.max(0, total - output - 500),
    cacheWrite: 497,
    totalTokens: total + 0,
    cost: { input: 0.00001, output: output * 0.000015, cacheRead: 0.001, cacheWrite: 0.0005, total: 0.002 },
  });

  write({
    type: "session",
    version: 3,
    id: "019a0000-0000-7000-8000-000000000001",
    timestamp: iso(clock),
    cwd: "/home/dev/webshop",
  });
  let leaf: string | null = null;
  const append = (o: Record<string, unknown>): string => {
    const id = newId();
    write({
      type: o.type,
      id,
      parentId: leaf,
      timestamp: iso(tick()),
      ...Object.fromEntries(Object.entries(o).filter(([k]) => k !== "type")),
    });
    leaf = id;
    return id;
  };
  append({ type: "model_change", provider: "anthropic", modelId: "claude-opus-4-6" });
  append({ type: "thinking_level_change", thinkingLevel: "medium" });
  append({
    type: "message",
    message: {
      role: "system",
      content: "",
      sections: {
        preamble: textBlob(2000),
        tools: textBlob(1500),
        rules: textBlob(1200),
        cwd: "Current working directory: /home/dev/webshop",
      },
      toolsAdded: ["read", "edit", "write", "bash"].map((name) => ({
        name,
        description: textBlob(300),
        parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      })),
      timestamp: clock,
    },
  });
  let context = 6000; // tokens in context (rough, for realistic usage numbers)
  const compactAt = [0.25, 0.5, 0.75].map((f) => f * target);
  const branchAt = [0.15, 0.4, 0.65].map((f) => f * target);
  const labelAt = [0.3, 0.6].map((f) => f * target);
  let lastUser: string | null = null;
  const recentUsers: string[] = [];
  let turn = 0;

  const oneTurn = (): void => {
    turn++;
    const userId = append({
      type: "message",
      message: {
        role: "user",
        content: [{ type: "text", text: `Task ${turn}: ${textBlob(int(80, 600))}` }],
        timestamp: clock,
      },
    });
    lastUser = userId;
    recentUsers.push(userId);
    context += 150;
    const rounds = int(1, 5);
    for (let r = 0; r < rounds; r++) {
      const calls = int(1, 3);
      const toolCalls = Array.from({ length: calls }, (_, k) => {
        const name = pick(["read", "read", "edit", "write", "bash"]);
        const args: Record<string, unknown> =
          name === "bash" ? { command: "npm test -- --silent" } : { path: pick(FILES) };
        if (name === "edit") args.edits = [{ oldText: textBlob(120), newText: textBlob(140) }];
        if (name === "write") args.content = textBlob(int(500, 4000));
        return { type: "toolCall", id: `toolu_${turn}_${r}_${k}`, name, arguments: args };
      });
      const output = int(50, 900);
      context += output;
      append({
        type: "message",
        message: {
          role: "assistant",
          content: [
            { type: "thinking", thinking: textBlob(int(200, 1500)), thinkingSignature: base64(int(200, 800)) },
            ...toolCalls,
          ],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-opus-4-6",
          usage: usageOf(context, output),
          stopReason: "toolUse",
          timestamp: clock,
        },
      });
      for (const call of toolCalls) {
        const screenshot = flavour === "image" && call.name === "read" && rand() < 0.55;
        const content = screenshot
          ? [{ type: "image", data: base64(int(80_000, 600_000)), mimeType: "image/png" }]
          : [{ type: "text", text: textBlob(flavour === "text" ? int(2_000, 50_000) : int(300, 4_000)) }];
        context += screenshot ? 1200 : Math.ceil((content[0] as { text: string }).text.length / 4);
        append({
          type: "message",
          message: {
            role: "toolResult",
            toolCallId: call.id,
            toolName: call.name,
            content,
            ...(call.name === "edit" ? { details: { diff: textBlob(800) } } : {}),
            isError: false,
            timestamp: clock,
          },
        });
      }
    }
    const output = int(30, 400);
    context += output;
    append({
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "text", text: textBlob(int(100, 1200)) }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-opus-4-6",
        usage: usageOf(context, output),
        stopReason: "stop",
        timestamp: clock,
      },
    });
  };

  while (bytes < target) {
    if (compactAt.length && bytes >= compactAt[0]!) {
      compactAt.shift();
      const kept = recentUsers[Math.max(0, recentUsers.length - 3)] ?? lastUser!;
      append({
        type: "compaction",
        summary: `## Goal\n${textBlob(1500)}\n\n## Progress\n### Done\n- [x] ${textBlob(600)}\n\n<read-files>\n${FILES.slice(0, 4).join("\n")}\n</read-files>`,
        firstKeptEntryId: kept,
        tokensBefore: context,
        details: { readFiles: FILES.slice(0, 4).sort(), modifiedFiles: FILES.slice(4).sort() },
        usage: usageOf(20000, 1500),
        fromHook: false,
        systemMessage: {
          role: "system",
          content: "",
          sections: { preamble: textBlob(2000), tools: textBlob(1500) },
          timestamp: clock,
        },
      });
      context = 30000;
      continue;
    }
    if (branchAt.length && bytes >= branchAt[0]!) {
      branchAt.shift();
      const fork: string | null = leaf;
      oneTurn();
      oneTurn();
      const abandoned: string | null = leaf;
      leaf = fork;
      append({
        type: "branch_summary",
        fromId: abandoned,
        summary: `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n${textBlob(800)}`,
        details: { readFiles: [FILES[0]], modifiedFiles: [FILES[1]] },
        usage: usageOf(5000, 600),
        fromHook: false,
      });
      continue;
    }
    if (labelAt.length && bytes >= labelAt[0]!) {
      labelAt.shift();
      append({ type: "label", targetId: lastUser, label: `checkpoint-${turn}` });
      continue;
    }
    oneTurn();
  }
  fs.closeSync(fd);
  return { bytes, entries };
}

if (require.main === module) {
  const [out, size, flavour, seed] = process.argv.slice(2);
  if (!out || !size || (flavour !== "image" && flavour !== "text")) {
    console.error("usage: node out/test/bench/generate.js <out.jsonl> <sizeMB> <image|text> [seed]");
    process.exit(2);
  }
  const result = generateSession(out, Number(size), flavour, seed ? Number(seed) : undefined);
  console.log(JSON.stringify(result));
}
