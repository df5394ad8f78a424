/**
 * pi's token heuristics, exactly: `estimateTokens` and `calculateContextTokens`.
 *
 * Source: pi 1.6.0 `dist/core/compaction/compaction.js` (`estimateTokens`,
 * `estimateTextAndImageContentChars`, `calculateContextTokens`), on messages as `JSON.parse` reads them.
 */

/** Characters pi counts for one image block (`ESTIMATED_IMAGE_CHARS`): 4800 chars = 1200 tokens. */
export const ESTIMATED_IMAGE_CHARS = 4800;

/** Character counts of one message by what they are, before pi's `ceil(chars / 4)`. */
export interface CharBreakdown {
  /** Text blocks, string content, summaries, bash command + output, system prompt text and sections. */
  text: number;
  /** Assistant thinking blocks. */
  thinking: number;
  /** Assistant tool calls: `name.length + JSON.stringify(arguments).length`. */
  toolCalls: number;
  /** Image blocks at {@link ESTIMATED_IMAGE_CHARS} each. */
  images: number;
  /** `JSON.stringify(toolsAdded).length` of system messages. */
  tools: number;
}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string's `length`; 0 for anything else. */
function strLength(value: unknown): number {
  return typeof value === "string" ? value.length : 0;
}

/**
 * `JSON.stringify(value).length` (pi's measure of tool-call arguments and `toolsAdded`); 0 for
 * `undefined`, where pi's `.length` would throw.
 */
function jsonLength(value: unknown): number {
  if (value === undefined) return 0;
  try {
    return JSON.stringify(value).length;
  } catch (error) {
    // V8's JSON.stringify recurses; JSON.parse reads values nested far deeper (issue 16.2)
    if (error instanceof RangeError) return deepJsonLength(value);
    throw error;
  }
}

/** {@link jsonLength} of a value too deep for `JSON.stringify`, computed without recursion. */
function deepJsonLength(value: unknown): number {
  let n = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (v === null || typeof v !== "object") {
      n += JSON.stringify(v).length;
    } else if (Array.isArray(v)) {
      n += 2 + Math.max(0, v.length - 1);
      for (const item of v) pending.push(item);
    } else {
      const keys = Object.keys(v);
      n += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        n += JSON.stringify(key).length + 1;
        pending.push((v as Obj)[key]);
      }
    }
  }
  return n;
}

function contentChars(content: unknown, into: CharBreakdown): void {
  if (typeof content === "string") {
    into.text += content.length;
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === "text") into.text += strLength(block.text);
    else if (block.type === "image") into.images += ESTIMATED_IMAGE_CHARS;
  }
}

/**
 * Characters pi's `estimateTokens` counts for a message, split by kind.
 * Unknown roles count nothing (pi returns 0 for them).
 */
export function messageChars(message: unknown): CharBreakdown {
  const chars: CharBreakdown = { text: 0, thinking: 0, toolCalls: 0, images: 0, tools: 0 };
  if (!isObject(message)) return chars;
  switch (message.role) {
    case "system": {
      contentChars(message.content, chars);
      const sections = message.sections;
      if (isObject(sections)) {
        for (const key of Object.keys(sections)) {
          const section = sections[key];
          // pi: `if (section) chars += section.length` — a truthy non-string adds its `.length` (undefined → NaN); strings only here.
          if (section) chars.text += strLength(section);
        }
      }
      if (message.toolsAdded) chars.tools += jsonLength(message.toolsAdded);
      return chars;
    }
    case "user":
    case "custom":
    case "toolResult":
      contentChars(message.content, chars);
      return chars;
    case "assistant": {
      const content = message.content;
      if (!Array.isArray(content)) return chars;
      for (const block of content) {
        if (!isObject(block)) continue;
        if (block.type === "text") chars.text += strLength(block.text);
        else if (block.type === "thinking") chars.thinking += strLength(block.thinking);
        else if (block.type === "toolCall") chars.toolCalls += strLength(block.name) + jsonLength(block.arguments);
      }
      return chars;
    }
    case "bashExecution":
      chars.text += strLength(message.command) + strLength(message.output);
      return chars;
    case "branchSummary":
    case "compactionSummary":
      chars.text += strLength(message.summary);
      return chars;
    default:
      return chars;
  }
}

/** Sum of a {@link CharBreakdown}. */
export function totalChars(chars: CharBreakdown): number {
  return chars.text + chars.thinking + chars.toolCalls + chars.images + chars.tools;
}

/**
 * pi's `estimateTokens(message)`: `Math.ceil(chars / 4)` with pi's per-role character rules.
 * @returns estimated tokens (integer ≥ 0).
 */
export function estimateTokens(message: unknown): number {
  return Math.ceil(totalChars(messageChars(message)) / 4);
}

/** The usage fields pi reads, as numbers (missing or non-numeric fields are `NaN`). */
export interface UsageNumbers {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** `cost.total` (US dollars, as stored: pi never recomputes it). */
  cost: number;
  /** `cost.input`, `cost.cacheRead`, `cost.cacheWrite` (pi's cache-miss pricing reads them). */
  costInput: number;
  costCacheRead: number;
  costCacheWrite: number;
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number.NaN;
}

/** Read a usage object from a parsed value (`undefined` when it is not an object). */
export function readUsage(value: unknown): UsageNumbers | undefined {
  if (!isObject(value)) return undefined;
  const cost = isObject(value.cost) ? value.cost : {};
  return {
    input: num(value.input),
    output: num(value.output),
    cacheRead: num(value.cacheRead),
    cacheWrite: num(value.cacheWrite),
    totalTokens: num(value.totalTokens),
    cost: num(cost.total),
    costInput: num(cost.input),
    costCacheRead: num(cost.cacheRead),
    costCacheWrite: num(cost.cacheWrite),
  };
}

/**
 * pi's `calculateContextTokens(usage)`: `totalTokens` when truthy, else
 * `input + output + cacheRead + cacheWrite` (output counts: it is part of the next request).
 * @returns tokens; `NaN` when the usage has neither a usable total nor numeric components.
 */
export function calculateContextTokens(usage: UsageNumbers): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}
