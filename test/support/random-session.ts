/**
 * Random pi session trees for conformance tests: fast-check generates a recipe (a list of steps
 * with random numbers) and `buildSession` turns it into well-formed pi 1.6.0 entries with the
 * awkward structures real sessions and bug reports contain — branches, compactions anywhere
 * (retain-none, dangling firstKeptEntryId, older compactions inside a kept range), context edits,
 * split turns, system-message patches, empty branch summaries, labels, images, nested calls,
 * zero/error/aborted usage, missing parents, duplicate ids. Most tool results answer a call of a
 * recent assistant on their path (also of failed ones, also after interleaved messages); the rest
 * are orphans; a "tool turn" is an assistant with calls directly followed by their results, as pi
 * writes them (sometimes a result missing, or a message between a call and its result); some
 * context edits shrink an assistant but keep its tool calls.
 */

import fc from "fast-check";
import { piUsage } from "./session-builder";

export type StepKind =
  | "user"
  | "assistant"
  | "toolResult"
  | "toolTurn"
  | "bash"
  | "customMessage"
  | "system"
  | "compaction"
  | "branchSummary"
  | "contextEdit"
  | "label"
  | "sessionInfo"
  | "modelChange"
  | "thinking"
  | "custom"
  | "usage"
  | "unknown";

export interface Step {
  kind: StepKind;
  /** 0..99: where the parent comes from (previous entry, random earlier, root, missing). */
  parentRoll: number;
  /** Random numbers the builder uses for sizes and choices. */
  a: number;
  b: number;
  c: number;
  d: number;
}

const kinds: [StepKind, number][] = [
  ["user", 16],
  ["assistant", 22],
  ["toolResult", 14],
  ["toolTurn", 8],
  ["bash", 3],
  ["customMessage", 4],
  ["system", 3],
  ["compaction", 7],
  ["branchSummary", 4],
  ["contextEdit", 5],
  ["label", 3],
  ["sessionInfo", 1],
  ["modelChange", 2],
  ["thinking", 1],
  ["custom", 2],
  ["usage", 1],
  ["unknown", 1],
];

export const stepArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.oneof(...kinds.map(([k, w]) => ({ arbitrary: fc.constant(k), weight: w }))),
  parentRoll: fc.integer({ min: 0, max: 99 }),
  a: fc.nat({ max: 1_000_000 }),
  b: fc.nat({ max: 1_000_000 }),
  c: fc.nat({ max: 1_000_000 }),
  d: fc.nat({ max: 1_000_000 }),
});

export const recipeArb = fc.record({
  steps: fc.array(stepArb, { minLength: 1, maxLength: 60 }),
  window: fc.constantFrom(4096, 16000, 32000, 128000),
  reserve: fc.constantFrom(0, 1000, 2000, 4000, 16384),
  keepRecent: fc.constantFrom(0, 1, 200, 1000, 3000, 20000),
  leafRoll: fc.integer({ min: 0, max: 99 }),
  targetRoll: fc.nat({ max: 1_000_000 }),
});

export type Recipe = {
  steps: Step[];
  window: number;
  reserve: number;
  keepRecent: number;
  leafRoll: number;
  targetRoll: number;
};

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "src/a.ts",
  "README.md",
  "é",
  "😀",
  '"quoted"',
  "back\\slash",
  "tab\t",
  "new\nline",
  "{json:1}",
  "日本語",
];

function text(seed: number, length: number): string {
  let out = "";
  let x = seed + 1;
  while (out.length < length) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += `${WORDS[x % WORDS.length]} `;
  }
  return out.slice(0, length);
}

const FILES = ["src/a.ts", "src/b.ts", "README.md", "docs/x.md", "/abs/path.ts", "src/ä.ts"];
const TOOLS = ["read", "write", "edit", "bash", "grep", "Read"];

interface Built {
  id: string;
  parentId: string | null;
  type: string;
  role?: string;
  /** Assistants: the tool calls (`toolCall` blocks). */
  calls?: { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> }[];
}

/** Turn a recipe into JSONL text (header + entries). */
export function buildSession(recipe: Recipe): {
  jsonl: string;
  ids: string[];
  leaf: string | null;
  target: string | null;
} {
  const lines: string[] = [
    JSON.stringify({
      type: "session",
      version: 3,
      id: "rand-session",
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd: "/tmp/rand",
    }),
  ];
  const built: Built[] = [];
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  let systemCount = 0;
  recipe.steps.forEach((step, index) => {
    t += 1000;
    let parentId: string | null;
    const prev = built[built.length - 1];
    if (!prev || step.parentRoll < 3) parentId = null;
    else if (step.parentRoll < 72) parentId = prev.id;
    else if (step.parentRoll < 97) parentId = built[step.b % built.length]!.id;
    else if (step.parentRoll === 97) parentId = "deadbeef";
    else parentId = prev.id;
    const timestamp = new Date(t).toISOString();
    // The path of the new entry's parent (for edits / kept ids), resolved like pi (last id wins).
    const byId = new Map(built.map((b) => [b.id, b]));
    const pathIds: string[] = [];
    let cur = parentId ? byId.get(parentId) : undefined;
    const seen = new Set<string>();
    while (cur && !seen.has(cur.id)) {
      seen.add(cur.id);
      pathIds.unshift(cur.id);
      cur = cur.parentId ? byId.get(cur.parentId) : undefined;
    }
    // Rarely reuse an earlier id (duplicate ids, last wins) — never one on the parent's path (a cycle would hang pi).
    const reuse = step.parentRoll === 98 && built.length > 0 ? built[step.a % built.length]!.id : undefined;
    const id = reuse && !seen.has(reuse) ? reuse : `e${index.toString(16).padStart(7, "0")}`;
    const base = { id, parentId, timestamp };
    const pick = (n: number): string | undefined => (pathIds.length ? pathIds[n % pathIds.length] : undefined);
    let entry: Record<string, unknown>;
    let role: string | undefined;
    let assistantCalls: Built["calls"];
    const extra: Record<string, unknown>[] = [];
    switch (step.kind) {
      case "user": {
        role = "user";
        const content =
          step.c % 5 === 0
            ? text(step.a, step.b % 4000)
            : [
                { type: "text", text: text(step.a, step.b % 6000) },
                ...(step.c % 7 === 0 ? [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] : []),
                ...(step.c % 11 === 0 ? [{ type: "text", text: "" }] : []),
              ];
        entry = { type: "message", ...base, message: { role, content, timestamp: t } };
        break;
      }
      case "assistant": {
        role = "assistant";
        const blocks: unknown[] = [];
        if (step.a % 3 === 0)
          blocks.push({ type: "thinking", thinking: text(step.b, step.c % 3000), thinkingSignature: "sig" });
        if (step.a % 4 !== 1) blocks.push({ type: "text", text: text(step.c, step.d % 2500) });
        const calls = step.d % 4;
        for (let k = 0; k < calls; k++) {
          const tool = TOOLS[(step.a + k) % TOOLS.length]!;
          const args: Record<string, unknown> =
            step.b % 9 === k ? { path: 42 } : { path: FILES[(step.b + k) % FILES.length] };
          if (tool === "write" || tool === "edit") args.content = text(step.a + k, step.c % 1500);
          if (tool === "bash") args.command = "ls -la";
          const call = { type: "toolCall" as const, id: `call_${index}_${k}`, name: tool, arguments: args };
          blocks.push(call);
          (assistantCalls ??= []).push(call);
        }
        const stops = ["stop", "toolUse", "length", "error", "aborted", "stop", "toolUse"];
        const stopReason = stops[step.b % stops.length];
        const zero = step.c % 6 === 0 || stopReason === "error";
        const total = zero ? 0 : 200 + (step.d % 60000);
        const usage = piUsage({
          input: zero ? 0 : Math.floor(total * 0.7),
          output: zero ? 0 : Math.floor(total * 0.1),
          cacheRead: zero ? 0 : total - Math.floor(total * 0.7) - Math.floor(total * 0.1),
          totalTokens: step.c % 10 === 1 ? 0 : total,
        });
        entry = {
          type: "message",
          ...base,
          message: {
            role,
            content: blocks,
            api: step.a % 50 === 7 ? "pi-virtual" : "openai-completions",
            provider: step.d % 13 === 0 ? "other" : "p",
            model: step.d % 13 === 0 ? "m2" : "m",
            usage,
            stopReason,
            timestamp: t,
          },
        };
        break;
      }
      case "toolResult": {
        role = "toolResult";
        const content: unknown[] = [{ type: "text", text: text(step.a, step.b % 9000) }];
        if (step.c % 6 === 0) content.push({ type: "image", data: "AAAA", mimeType: "image/png" });
        // Mostly the answer to a call of the nearest (sometimes the second nearest) assistant with calls on the path.
        let call: { id: string; name: string } | undefined;
        if (step.a % 4 !== 0) {
          const callers = pathIds.map((p) => byId.get(p)!).filter((e) => e.calls?.length);
          const caller = callers[callers.length - 1 - (step.c % 7 === 0 ? 1 : 0)] ?? callers[callers.length - 1];
          if (caller?.calls) call = caller.calls[step.c % caller.calls.length];
        }
        const message: Record<string, unknown> = {
          role,
          toolCallId: call?.id ?? `call_${step.a}`,
          toolName: call?.name ?? TOOLS[step.a % TOOLS.length],
          content,
          isError: step.d % 9 === 0,
          timestamp: t,
        };
        if (step.d % 5 === 0)
          message.nestedCalls = {
            calls: [
              { id: "n1", name: "read", arguments: { path: FILES[step.c % FILES.length] } },
              { id: "n2", name: "edit", arguments: { path: FILES[(step.c + 1) % FILES.length] } },
            ],
            complete: true,
          };
        entry = { type: "message", ...base, message };
        break;
      }
      case "toolTurn": {
        // assistant with 1-3 calls, then (most of) their results, as pi writes a tool turn
        role = "assistant";
        const n = 1 + (step.d % 3);
        const calls = Array.from({ length: n }, (_, k) => ({
          type: "toolCall" as const,
          id: `call_${index}_${k}`,
          name: TOOLS[(step.a + k) % TOOLS.length]!,
          arguments: { path: FILES[(step.b + k) % FILES.length], command: "ls" },
        }));
        assistantCalls = calls;
        const stopReason = step.c % 9 === 0 ? "error" : step.c % 11 === 0 ? "aborted" : "toolUse";
        const total = 300 + (step.d % 20000);
        entry = {
          type: "message",
          ...base,
          message: {
            role,
            content: [{ type: "text", text: text(step.c, step.a % 600) }, ...calls],
            api: "openai-completions",
            provider: "p",
            model: "m",
            usage: piUsage({ input: total, output: 50 }),
            stopReason,
            timestamp: t,
          },
        };
        let parent = id;
        calls.forEach((call, k) => {
          if (step.b % 13 === k) return; // a result missing
          if (step.b % 17 === k) {
            const noteId = `${id}n${k}`;
            extra.push({
              type: "custom_message",
              id: noteId,
              parentId: parent,
              timestamp,
              customType: "ext",
              content: "interjected note",
              display: true,
            });
            parent = noteId;
          }
          const resultId = `${id}r${k}`;
          extra.push({
            type: "message",
            id: resultId,
            parentId: parent,
            timestamp,
            message: {
              role: "toolResult",
              toolCallId: call.id,
              toolName: call.name,
              content: [{ type: "text", text: text(step.a + k, (step.b * (k + 1)) % 7000) }],
              isError: false,
              timestamp: t,
            },
          });
          parent = resultId;
        });
        break;
      }
      case "bash":
        role = "bashExecution";
        entry = {
          type: "message",
          ...base,
          message: {
            role,
            command: text(step.a, 20),
            output: text(step.b, step.c % 2000),
            exitCode: step.d % 3,
            cancelled: false,
            truncated: false,
            excludeFromContext: step.d % 4 === 0,
            timestamp: t,
          },
        };
        break;
      case "customMessage":
        entry = {
          type: "custom_message",
          ...base,
          customType: "ext",
          content: step.a % 2 ? text(step.b, step.c % 800) : [{ type: "text", text: text(step.b, step.c % 800) }],
          display: true,
        };
        break;
      case "system": {
        role = "system";
        const first = systemCount++ === 0 || step.a % 3 === 0;
        const message: Record<string, unknown> = first
          ? {
              role,
              content: "",
              sections: { preamble: text(step.a, 300), tools: text(step.b, 200), cwd: "/tmp/rand" },
              toolsAdded: ["read", "write", "edit", "bash"].map((name) => ({
                name,
                description: text(step.c, 80),
                parameters: { type: "object", properties: { path: { type: "string" } } },
              })),
              timestamp: t,
            }
          : {
              role,
              content: step.b % 2 ? text(step.c, 120) : [{ type: "text", text: text(step.c, 60) }],
              sections: step.c % 2 ? { rules: text(step.d, 150), tools: null } : { preamble: text(step.d, 100) },
              ...(step.d % 3 === 0 ? { toolsAdded: [{ name: "grep", description: "search", parameters: {} }] } : {}),
              ...(step.d % 3 === 1 ? { toolsRemoved: [{ name: "bash" }] } : {}),
              timestamp: t,
            };
        entry = { type: "message", ...base, message };
        break;
      }
      case "compaction": {
        const mode = step.a % 10;
        const firstKeptEntryId =
          mode < 6
            ? (pick(step.b) ?? id)
            : mode < 8
              ? id
              : mode === 8
                ? "missing1"
                : (built[step.b % Math.max(1, built.length)]?.id ?? id);
        const summary = step.c % 9 === 0 ? "" : text(step.c, 50 + (step.d % 1500));
        entry = {
          type: "compaction",
          ...base,
          summary,
          firstKeptEntryId,
          tokensBefore: step.d % 100000,
          ...(step.a % 3
            ? { details: { readFiles: [FILES[step.b % FILES.length]], modifiedFiles: [FILES[step.c % FILES.length]] } }
            : {}),
          fromHook: step.d % 4 === 0,
          ...(step.b % 2
            ? {
                systemMessage: {
                  role: "system",
                  content: "",
                  sections: { preamble: text(step.a, 200) },
                  toolsAdded: [{ name: "read", description: "r", parameters: {} }],
                  timestamp: t,
                },
              }
            : {}),
        };
        break;
      }
      case "branchSummary":
        entry = {
          type: "branch_summary",
          ...base,
          fromId: pick(step.a) ?? "root",
          summary: step.b % 5 === 0 ? "" : text(step.c, step.d % 1200),
          ...(step.a % 2
            ? { details: { readFiles: [FILES[step.c % FILES.length]], modifiedFiles: [FILES[step.d % FILES.length]] } }
            : {}),
          fromHook: step.b % 7 === 0,
        };
        break;
      case "contextEdit": {
        const targetId =
          step.a % 10 === 0 ? (built[step.b % Math.max(1, built.length)]?.id ?? "nope") : (pick(step.b) ?? "nope");
        const r = step.c % 5;
        const targetCalls = byId.get(targetId)?.calls ?? [];
        const replacement =
          r === 0 || r === 1
            ? null
            : r === 2
              ? { content: text(step.d, step.d % 700) }
              : r === 3
                ? {
                    content: [
                      { type: "text", text: text(step.d, 90) },
                      { type: "toolCall", id: "x", name: "edit", arguments: { path: "src/edited.ts" } },
                    ],
                  }
                : { content: [{ type: "text", text: text(step.d, 40) }, ...targetCalls] };
        entry = { type: "context_edit", ...base, targetId, replacement };
        break;
      }
      case "label":
        entry = {
          type: "label",
          ...base,
          targetId: pick(step.a) ?? id,
          ...(step.b % 4 ? { label: `L${step.b % 10}` } : {}),
        };
        break;
      case "sessionInfo":
        entry = { type: "session_info", ...base, name: step.a % 3 ? ` name ${step.a % 7}\n x ` : "" };
        break;
      case "modelChange":
        entry = {
          type: "model_change",
          ...base,
          provider: step.a % 2 ? "p" : "other",
          modelId: step.a % 2 ? "m" : "m2",
        };
        break;
      case "thinking":
        entry = { type: "thinking_level_change", ...base, thinkingLevel: ["off", "low", "high"][step.a % 3] };
        break;
      case "custom":
        entry = { type: "custom", ...base, customType: "ext-state", data: { n: step.a } };
        break;
      case "usage":
        entry = {
          type: "usage",
          ...base,
          kind: "other",
          provider: "p",
          model: "m",
          usage: piUsage({ input: 1, output: 1 }),
        };
        break;
      default:
        entry = { type: "some_future_type", ...base, payload: text(step.a, 50) };
    }
    lines.push(JSON.stringify(entry));
    const b: Built = { id, parentId, type: entry.type as string };
    if (role) b.role = role;
    if (assistantCalls) b.calls = assistantCalls;
    built.push(b);
    for (const e of extra) {
      lines.push(JSON.stringify(e));
      const more: Built = { id: e.id as string, parentId: e.parentId as string, type: e.type as string };
      const message = e.message as { role?: string } | undefined;
      if (message?.role) more.role = message.role;
      built.push(more);
    }
  });
  const ids = built.map((b) => b.id);
  const leaf = recipe.leafRoll < 70 || ids.length === 0 ? null : ids[recipe.leafRoll % ids.length]!;
  const target = ids.length ? ids[recipe.targetRoll % ids.length]! : null;
  return { jsonl: `${lines.join("\n")}\n`, ids, leaf, target };
}
