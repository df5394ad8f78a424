/**
 * Mutations of session files for fuzzing the doctor: what damaged and hand-edited sessions look
 * like — flipped bytes, lost, duplicated and swapped lines, a cut tail, a BOM, foreign JSON lines,
 * parent ids rewired (cycles, self parents, forward references), ids reused, context edits with
 * broken replacements, tool-call ids scrambled, compactions pointed elsewhere, huge lines.
 */

import fc from "fast-check";

/** One mutation with its random numbers. */
export type Mutation =
  | { kind: "flip-byte"; at: number; value: number }
  | { kind: "delete-line" | "duplicate-line" | "swap-lines" | "truncate"; at: number; other: number }
  | { kind: "bom" }
  | { kind: "json-line"; at: number; value: unknown }
  | {
      kind: "rewire-parent" | "reuse-id" | "break-edit" | "scramble-call" | "repoint-compaction";
      at: number;
      other: number;
    }
  | { kind: "huge-line"; at: number; size: number };

const pair = fc.record({ at: fc.nat({ max: 1_000_000 }), other: fc.nat({ max: 1_000_000 }) });

/** Arbitrary mutations (each list applied in order). */
export const mutationsArb: fc.Arbitrary<Mutation[]> = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant("flip-byte" as const), at: fc.nat({ max: 1_000_000 }), value: fc.nat({ max: 255 }) }),
    ...(["delete-line", "duplicate-line", "swap-lines", "truncate"] as const).map((kind) =>
      pair.map((p) => ({ kind, ...p })),
    ),
    fc.constant({ kind: "bom" as const }),
    fc.record({ kind: fc.constant("json-line" as const), at: fc.nat({ max: 1_000_000 }), value: fc.jsonValue() }),
    ...(["rewire-parent", "reuse-id", "break-edit", "scramble-call", "repoint-compaction"] as const).map((kind) =>
      pair.map((p) => ({ kind, ...p })),
    ),
    fc.record({
      kind: fc.constant("huge-line" as const),
      at: fc.nat({ max: 1_000_000 }),
      size: fc.integer({ min: 9000, max: 40000 }),
    }),
  ),
  { maxLength: 4 },
);

const BROKEN_REPLACEMENTS: unknown[] = [
  undefined,
  {},
  { text: "x" },
  { content: 5 },
  "plain",
  7,
  [],
  { content: null },
];

/** Apply mutations to JSONL text (lines by `\n`; the header is line 0). */
export function mutate(jsonl: string, mutations: readonly Mutation[]): string {
  let text = jsonl;
  for (const m of mutations) text = apply(text, m);
  return text;
}

function apply(text: string, m: Mutation): string {
  const lines = text.split("\n");
  const pick = (x: number) => (lines.length === 0 ? 0 : x % lines.length);
  const edit = (at: number, change: (entry: Record<string, unknown>, all: Record<string, unknown>[]) => void) => {
    const parsed = lines.map((l) => {
      try {
        const v = JSON.parse(l) as unknown;
        return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
      } catch {
        return undefined;
      }
    });
    const entries = parsed.filter((p): p is Record<string, unknown> => p !== undefined && p.type !== "session");
    if (entries.length === 0) return text;
    const target = entries[at % entries.length]!;
    change(target, entries);
    const i = parsed.indexOf(target);
    lines[i] = JSON.stringify(target);
    return lines.join("\n");
  };
  switch (m.kind) {
    case "flip-byte": {
      const bytes = Buffer.from(text);
      if (bytes.length === 0) return text;
      bytes[m.at % bytes.length] = m.value;
      return bytes.toString(); // invalid UTF-8 decodes to U+FFFD, as a reader of the bytes sees it
    }
    case "delete-line":
      lines.splice(pick(m.at), 1);
      return lines.join("\n");
    case "duplicate-line": {
      const i = pick(m.at);
      lines.splice(pick(m.other), 0, lines[i] ?? "");
      return lines.join("\n");
    }
    case "swap-lines": {
      const i = pick(m.at);
      const j = pick(m.other);
      [lines[i], lines[j]] = [lines[j] ?? "", lines[i] ?? ""];
      return lines.join("\n");
    }
    case "truncate":
      return text.slice(0, m.at % (text.length + 1));
    case "bom":
      return `\ufeff${text}`;
    case "json-line":
      lines.splice(pick(m.at), 0, JSON.stringify(m.value) ?? "null");
      return lines.join("\n");
    case "rewire-parent":
      return edit(m.at, (e, all) => {
        const r = m.other % 4;
        e.parentId = r === 0 ? e.id : r === 1 ? "gone" : r === 2 ? null : all[m.other % all.length]!.id;
      });
    case "reuse-id":
      return edit(m.at, (e, all) => {
        e.id = all[m.other % all.length]!.id;
      });
    case "break-edit":
      return edit(m.at, (e, all) => {
        e.type = "context_edit";
        e.targetId = all[m.other % all.length]!.id;
        const r = BROKEN_REPLACEMENTS[m.other % BROKEN_REPLACEMENTS.length];
        if (r === undefined) delete e.replacement;
        else e.replacement = r;
      });
    case "scramble-call":
      return edit(m.at, (e) => {
        const msg = e.message as Record<string, unknown> | undefined;
        if (msg && msg.role === "toolResult") msg.toolCallId = `x${m.other % 5}`;
        else if (msg && Array.isArray(msg.content))
          for (const b of msg.content as Record<string, unknown>[])
            if (b && b.type === "toolCall") b.id = `x${m.other % 5}`;
      });
    case "repoint-compaction":
      return edit(m.at, (e, all) => {
        e.type = "compaction";
        e.summary ??= "summary";
        e.tokensBefore ??= 1000;
        e.firstKeptEntryId = m.other % 3 === 0 ? "nowhere" : all[m.other % all.length]!.id;
      });
    case "huge-line":
      lines.splice(
        pick(m.at),
        0,
        JSON.stringify({
          type: "message",
          id: `huge${m.at % 97}`,
          parentId: null,
          timestamp: "2026-01-01T00:00:00.000Z",
          message: { role: "user", content: "y".repeat(m.size), timestamp: 1 },
        }),
      );
      return lines.join("\n");
  }
}
