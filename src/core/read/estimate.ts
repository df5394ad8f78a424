/** pi 1.6.0's token heuristics exactly (`compaction/compaction.js`), on messages as `JSON.parse` reads them. */

/** pi's `ESTIMATED_IMAGE_CHARS`: 4800 chars = 1200 tokens. */
export const ESTIMATED_IMAGE_CHARS = 4800;

/** Characters of one message by kind, before pi's `ceil(chars / 4)`. */
export interface CharBreakdown {
  /** Text, summaries, bash command + output, system prompt text and sections. */
  text: number;
  thinking: number;
  /** `name.length + JSON.stringify(arguments).length`. */
  toolCalls: number;
  images: number;
  tools: number;
}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === "string";

function strLength(value: unknown): number {
  return typeof value === "string" ? value.length : 0;
}

/** `JSON.stringify(value).length`; 0 for `undefined`, where pi's `.length` would throw. */
function jsonLength(value: unknown): number {
  if (value === undefined) return 0;
  try {
    return JSON.stringify(value).length;
  } catch (error) {
    // V8's JSON.stringify recurses; JSON.parse reads values nested far deeper
    if (error instanceof RangeError) return deepJsonLength(value);
    throw error;
  }
}

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

/** Characters pi's `estimateTokens` counts for a message, by kind; unknown roles count nothing. */
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
          // pi adds a truthy non-string section's `.length` (NaN); strings only here
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

export function totalChars(chars: CharBreakdown): number {
  return chars.text + chars.thinking + chars.toolCalls + chars.images + chars.tools;
}

/** pi's `estimateTokens(message)`: `Math.ceil(chars / 4)` with its per-role rules (tokens). */
export function estimateTokens(message: unknown): number {
  return Math.ceil(totalChars(messageChars(message)) / 4);
}

/** Missing or non-numeric fields are `NaN`. */
export interface UsageNumbers {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** `cost.total` in US dollars, as stored: pi never recomputes it. */
  cost: number;
  /** pi's cache-miss pricing reads these. */
  costInput: number;
  costCacheRead: number;
  costCacheWrite: number;
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number.NaN;
}

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
 * pi's `calculateContextTokens`: `totalTokens` when truthy, else input + output + cacheRead + cacheWrite
 * (output is part of the next request). `NaN` when neither is usable.
 */
export function calculateContextTokens(usage: UsageNumbers): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** pi's `estimateTokens` throws (`TypeError`) or counts `NaN` on a message. */
export interface EstimateProblem {
  kind: "throws" | "nan";
  /** In English, like pi's own failure. */
  reason: string;
}

/** pi's `x.length`: a string or array has one; null/undefined throws; anything else is `undefined` (NaN). */
function lengthProblem(value: unknown, what: string): EstimateProblem | undefined {
  if (value === null || value === undefined) return { kind: "throws", reason: `${what} is missing` };
  if (isString(value) || Array.isArray(value)) return undefined;
  return { kind: "nan", reason: `${what} is a ${typeof value}, not a string` };
}

/** pi's `estimateTextAndImageContentChars`: a string, else iterates blocks reading `type` and `text.length`. */
function contentProblem(content: unknown, what: string): EstimateProblem | undefined {
  if (isString(content)) return undefined;
  if (!Array.isArray(content))
    return {
      kind: "throws",
      reason: `${what} is ${content === null || content === undefined ? "missing" : `a ${typeof content}`}, not text or a list of blocks`,
    };
  let nan: EstimateProblem | undefined;
  for (const block of content) {
    if (block === null || block === undefined) return { kind: "throws", reason: `a block of ${what} is null` };
    if (isObject(block) && block.type === "text" && block.text !== undefined && block.text !== null) {
      const text = block.text;
      // pi: `block.type === "text" && block.text` — a falsy text counts nothing
      if (text !== false && text !== 0 && text !== "") nan ??= lengthProblem(text, `a text block's text in ${what}`);
    }
  }
  return nan;
}

/**
 * Where pi 1.6.0's `estimateTokens` fails on a projected message (rule by rule); undefined when pi
 * gets a number. A throw anywhere wins over a `NaN` (pi's loop throws even after a `NaN`).
 */
export function estimateProblem(message: unknown): EstimateProblem | undefined {
  if (!isObject(message)) return undefined; // `estimateTokens(5)`: no role, 0
  switch (message.role) {
    case "system": {
      const content = contentProblem(message.content, "the content");
      if (content?.kind === "throws") return content;
      let nan = content;
      const sections = message.sections;
      if (isObject(sections) || Array.isArray(sections) || isString(sections)) {
        const values = isString(sections)
          ? [] // Object.values of a string: its characters, each a string
          : Array.isArray(sections)
            ? sections
            : Object.values(sections);
        for (const section of values)
          if (section !== null && section !== undefined && section !== false && section !== 0 && section !== "")
            nan ??= lengthProblem(section, "a system prompt section");
      }
      return nan;
    }
    case "user":
    case "custom":
    case "toolResult":
      return contentProblem(message.content, "the content");
    case "assistant": {
      const content = message.content;
      if (isString(content)) return undefined; // iterated by character: no block, no count
      if (!Array.isArray(content))
        return {
          kind: "throws",
          reason: `the content is ${content === null || content === undefined ? "missing" : `a ${typeof content}`}, not a list of blocks`,
        };
      let nan: EstimateProblem | undefined;
      for (const block of content) {
        if (block === null || block === undefined) return { kind: "throws", reason: "a content block is null" };
        if (!isObject(block)) continue;
        let problem: EstimateProblem | undefined;
        if (block.type === "text") problem = lengthProblem(block.text, "a text block's text");
        else if (block.type === "thinking") problem = lengthProblem(block.thinking, "a thinking block's thinking");
        else if (block.type === "toolCall") {
          problem = lengthProblem(block.name, "a tool call's name");
          if (problem?.kind !== "throws" && block.arguments === undefined)
            problem = { kind: "throws", reason: "a tool call has no arguments" };
        }
        if (problem?.kind === "throws") return problem;
        nan ??= problem;
      }
      return nan;
    }
    case "bashExecution": {
      const command = lengthProblem(message.command, "the command");
      if (command?.kind === "throws") return command;
      const output = lengthProblem(message.output, "the output");
      return output?.kind === "throws" ? output : (command ?? output);
    }
    case "branchSummary":
    case "compactionSummary":
      return lengthProblem(message.summary, "the summary");
    default:
      return undefined;
  }
}
