/**
 * The operations a client may request, run through pi's own APIs so pi's model, auth and rules
 * apply. Where pi would abort a running response (`/compact`), the bridge refuses with pi's wording.
 */

import { UnavailableError, type ContextEditQueue } from "./contextEdits";
import {
  MAX_EDIT_DRAFTS,
  type BridgeErrorCode,
  type BridgeOp,
  type BridgeOps,
  type BridgeState,
  type ContextEditDraft,
  type ProvidedCompaction,
} from "./protocol";
import type { PiApi, PiCommandContext, PiContext, PiEntry } from "./piApi";

const WAIT_RESPONSE_COMPACT = "Wait for the current response to finish before compacting.";
const WAIT_OPERATION_COMPACT = "Wait for the current compaction or tree navigation to finish before compacting.";
const WAIT_OPERATION_NAVIGATE =
  "Wait for the current compaction or tree navigation to finish before navigating the session tree.";
const WAIT_OPERATION_EDIT = "Wait for the current compaction or tree navigation to finish before editing the context.";

/** An operation's failure: `code` and `message` go to the client in the response. */
export class OpError extends Error {
  constructor(
    readonly code: BridgeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The compaction or navigation this bridge started, while it runs. */
export interface Running {
  kind: "compact" | "navigate";
  cancelled: boolean;
  keepFrom?: string;
  cutError?: string;
  compactionEntry?: PiEntry;
}

/** Run `run` with a command context (pi's `ExtensionCommandContext`); see `commandJobs.ts`. */
export type WithCommandContext = <T>(run: (ctx: PiCommandContext) => Promise<T>) => Promise<T>;

/** What the operations read and change on the bridge of the session (`BridgeServer`). */
export interface OperationHost {
  running: Running | undefined;
  readonly compacting: boolean;
  readonly navigating: boolean;
  state(): BridgeState;
  schedulePush(): void;
  readonly edits: ContextEditQueue;
  provided: { compaction: ProvidedCompaction; taken: boolean; mismatch?: string } | undefined;
}

/** The operations of one session's bridge. */
export class BridgeOperations {
  constructor(
    private readonly pi: PiApi,
    private readonly ctx: PiContext,
    private readonly host: OperationHost,
    private readonly withCommandContext: WithCommandContext,
  ) {}

  /**
   * Run one operation with its (untrusted) params. @throws {OpError} `bad-request`, `busy` (pi's wait
   * error), `cancelled`, `unavailable` or `failed`; any other error is reported as `failed`.
   */
  async execute(op: BridgeOp, params: Record<string, unknown>): Promise<unknown> {
    const optionalString = (key: string, max = 100_000): string | undefined => {
      const v = params[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "string" || v.length > max) throw new OpError("bad-request", `${key} must be a string`);
      return v;
    };
    const optionalBool = (key: string): boolean | undefined => {
      const v = params[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "boolean") throw new OpError("bad-request", `${key} must be a boolean`);
      return v;
    };
    switch (op) {
      case "state":
        return this.host.state();
      case "compact":
        return this.compact(
          optionalString("customInstructions"),
          optionalString("keepFrom", 200) || undefined,
          parseProvided(params.summary),
        );
      case "navigate": {
        const targetId = optionalString("targetId", 200);
        if (!targetId) throw new OpError("bad-request", "targetId is required");
        const options: BridgeOps["navigate"]["params"] = { targetId };
        const summarize = optionalBool("summarize");
        const replaceInstructions = optionalBool("replaceInstructions");
        const customInstructions = optionalString("customInstructions");
        const label = optionalString("label", 1000);
        if (summarize !== undefined) options.summarize = summarize;
        if (replaceInstructions !== undefined) options.replaceInstructions = replaceInstructions;
        if (customInstructions) options.customInstructions = customInstructions;
        if (label) options.label = label;
        return this.navigate(options);
      }
      case "setLabel": {
        const targetId = optionalString("targetId", 200);
        if (!targetId) throw new OpError("bad-request", "targetId is required");
        const label = optionalString("label", 1000)?.trim() || undefined;
        try {
          this.pi.setLabel(targetId, label);
        } catch (error) {
          throw new OpError("failed", (error as Error).message);
        }
        this.host.schedulePush();
        const leaf = this.ctx.sessionManager.getLeafId();
        return { entryId: leaf } satisfies BridgeOps["setLabel"]["result"];
      }
      case "setSessionName": {
        const name = optionalString("name", 1000)
          ?.replace(/[\r\n]+/g, " ")
          .trim();
        if (!name) throw new OpError("bad-request", "Session name cannot be empty");
        try {
          this.pi.setSessionName(name);
        } catch (error) {
          throw new OpError("failed", (error as Error).message);
        }
        this.host.schedulePush();
        return {
          entryId: this.ctx.sessionManager.getLeafId(),
          name: this.pi.getSessionName() ?? null,
        } satisfies BridgeOps["setSessionName"]["result"];
      }
      case "cancel": {
        const running = this.host.running;
        if (!running) return { cancelled: false };
        running.cancelled = true;
        this.ctx.abort();
        return { cancelled: true };
      }
      case "contextEdit": {
        const leafId = params.leafId;
        if (leafId !== undefined && leafId !== null && (typeof leafId !== "string" || leafId.length > 200))
          throw new OpError("bad-request", "leafId must be a string or null");
        return this.contextEdit(parseDrafts(params.drafts), leafId as string | null | undefined);
      }
      case "cancelContextEdit": {
        const batchId = optionalString("batchId", 64);
        if (!batchId) throw new OpError("bad-request", "batchId is required");
        return { cancelled: this.host.edits.cancel(batchId) } satisfies BridgeOps["cancelContextEdit"]["result"];
      }
    }
  }

  private contextEdit(
    drafts: ContextEditDraft[],
    expectedLeafId: string | null | undefined,
  ): BridgeOps["contextEdit"]["result"] {
    const host = this.host;
    if (host.running || host.compacting || host.navigating) throw new OpError("busy", WAIT_OPERATION_EDIT);
    const sm = this.ctx.sessionManager;
    try {
      if (this.ctx.isIdle()) {
        const leaf = sm.getLeafId();
        if (expectedLeafId !== undefined && expectedLeafId !== leaf)
          throw new OpError(
            "failed",
            `pi's session moved on since the edits were planned (pi's leaf is ${leaf ?? "the root"}, they were planned at ${expectedLeafId ?? "the root"}). Plan them again.`,
          );
        const { batch, entries } = host.edits.applyNow(drafts);
        host.schedulePush();
        return { batchId: batch.batchId, status: "applied", entries, leafId: sm.getLeafId() };
      }
      const batch = host.edits.enqueue(drafts);
      host.schedulePush();
      return { batchId: batch.batchId, status: "queued", entries: [], leafId: sm.getLeafId() };
    } catch (error) {
      if (error instanceof OpError) throw error;
      if (error instanceof UnavailableError) throw new OpError("unavailable", error.message);
      throw new OpError("failed", (error as Error).message);
    }
  }

  private compact(
    customInstructions: string | undefined,
    keepFrom: string | undefined,
    provided: ProvidedCompaction | undefined,
  ): Promise<BridgeOps["compact"]["result"]> {
    const host = this.host;
    if (host.running || host.compacting || host.navigating)
      return Promise.reject(new OpError("busy", WAIT_OPERATION_COMPACT));
    if (!this.ctx.isIdle()) return Promise.reject(new OpError("busy", WAIT_RESPONSE_COMPACT));
    const running: Running = { kind: "compact", cancelled: false, ...(keepFrom ? { keepFrom } : {}) };
    host.running = running;
    const given: OperationHost["provided"] = provided ? { compaction: provided, taken: false } : undefined;
    host.provided = given;
    return new Promise<BridgeOps["compact"]["result"]>((resolve, reject) => {
      const done = () => {
        if (host.running === running) host.running = undefined;
        if (host.provided === given) host.provided = undefined;
        host.schedulePush();
      };
      try {
        this.ctx.compact({
          ...(customInstructions?.trim() ? { customInstructions: customInstructions.trim() } : {}),
          onComplete: (result) => {
            done();
            const entryId = running.compactionEntry?.id ?? null;
            resolve({
              entryId,
              firstKeptEntryId: result.firstKeptEntryId,
              tokensBefore: result.tokensBefore,
              ...(typeof result.estimatedTokensAfter === "number"
                ? { estimatedTokensAfter: result.estimatedTokensAfter }
                : {}),
              leafId: this.ctx.sessionManager.getLeafId(),
            });
          },
          onError: (error) => {
            done();
            const message = error?.message ?? String(error);
            if (running.cutError) reject(new OpError("failed", running.cutError));
            else if (given?.mismatch) reject(new OpError("failed", given.mismatch));
            else if (keepFrom && /^Nothing to compact/.test(message))
              reject(
                new OpError(
                  "failed",
                  `pi cannot keep from ${keepFrom}: its own /compact has nothing to summarize (${message}), and pi 1.6.0 lets an extension move the cut only of a compaction it prepared.`,
                ),
              );
            else if (running.cancelled || message === "Compaction cancelled")
              reject(new OpError("cancelled", "Compaction cancelled"));
            else if (/^Wait for|in progress/.test(message)) reject(new OpError("busy", message));
            else reject(new OpError("failed", message));
          },
        });
      } catch (error) {
        done();
        reject(new OpError("failed", (error as Error).message));
      }
    });
  }

  private navigate(options: BridgeOps["navigate"]["params"]): Promise<BridgeOps["navigate"]["result"]> {
    const host = this.host;
    if (host.running || host.compacting || host.navigating)
      return Promise.reject(new OpError("busy", WAIT_OPERATION_NAVIGATE));
    const running: Running = { kind: "navigate", cancelled: false };
    host.running = running;
    const { targetId, ...rest } = options;
    return this.withCommandContext(async (ctx) => {
      const sm = ctx.sessionManager;
      const before = sm.getEntries().length;
      const oldLeafId = sm.getLeafId();
      let result: { cancelled: boolean };
      try {
        result = await ctx.navigateTree(targetId, rest);
      } catch (error) {
        const message = (error as Error).message;
        throw new OpError(/^Wait for/.test(message) ? "busy" : "failed", message);
      }
      const entries = sm
        .getEntries()
        .slice(before)
        .map((e) => ({ type: e.type, id: e.id, parentId: e.parentId }));
      return {
        cancelled: result.cancelled,
        ...(result.cancelled && running.cancelled ? { aborted: true } : {}),
        oldLeafId,
        newLeafId: sm.getLeafId(),
        entries,
      };
    }).finally(() => {
      if (host.running === running) host.running = undefined;
      host.schedulePush();
    });
  }
}

function parseProvided(value: unknown): ProvidedCompaction | undefined {
  if (value === undefined || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v !== "object" || typeof v.summary !== "string" || !v.summary.trim())
    throw new OpError("bad-request", "summary.summary must be a non-empty string");
  if (typeof v.firstKeptEntryId !== "string" || !v.firstKeptEntryId || v.firstKeptEntryId.length > 200)
    throw new OpError("bad-request", "summary.firstKeptEntryId must be an entry id");
  const out: ProvidedCompaction = { summary: v.summary, firstKeptEntryId: v.firstKeptEntryId };
  const d = v.details as { readFiles?: unknown; modifiedFiles?: unknown } | undefined;
  if (d !== undefined && d !== null) {
    const list = (x: unknown, key: string): string[] => {
      if (!Array.isArray(x) || !x.every((f) => typeof f === "string"))
        throw new OpError("bad-request", `summary.details.${key} must be a list of paths`);
      return x as string[];
    };
    out.details = { readFiles: list(d.readFiles, "readFiles"), modifiedFiles: list(d.modifiedFiles, "modifiedFiles") };
  }
  return out;
}

function parseDrafts(value: unknown): ContextEditDraft[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_EDIT_DRAFTS)
    throw new OpError("bad-request", `drafts must be a list of 1 to ${MAX_EDIT_DRAFTS} context edits`);
  return value.map((d, i) => {
    const draft = d as Record<string, unknown> | null;
    if (!draft || typeof draft !== "object" || draft.type !== "context_edit")
      throw new OpError("bad-request", `drafts[${i}] is not a context_edit draft`);
    if (typeof draft.targetId !== "string" || !draft.targetId || draft.targetId.length > 200)
      throw new OpError("bad-request", `drafts[${i}].targetId must be an entry id`);
    const r = draft.replacement;
    const content = r && typeof r === "object" ? (r as { content?: unknown }).content : undefined;
    if (r !== null && !(typeof content === "string" || Array.isArray(content)))
      throw new OpError("bad-request", "Context edit replacement must be null or contain string/array content");
    return {
      type: "context_edit",
      targetId: draft.targetId,
      replacement: r === null ? null : { content: content as string | unknown[] },
    };
  });
}
