/**
 * The routes that make "Pi Context: Compact Session…", "Switch to Here…" and labels run inside the
 * running pi, through its live bridge (`LiveBridgeService.resolve` finds and connects it). Each
 * route resolves `undefined` when no live bridge serves the file (or its pi is gone): the
 * caller's file-based flow with its live-session guard runs as before.
 *
 * Results arrive through the session file as usual: pi writes the entries, the session watcher
 * picks them up; the routes only wait for that before opening the summary diff.
 */

import { sessionLabel } from "../core/rules/sessionLabel";
import * as vscode from "vscode";
import { sameFile } from "../bridge/announce";
import { planSwitch, type SwitchPlan } from "../core/flows/switch";
import { bridgeSupportsKeepFrom, KEEP_FROM_BRIDGE_VERSION } from "../bridge/protocol";
import type {
  BaseServices,
  CompactCommandOutcome,
  RouteCompactionOptions,
  LabelResult,
  LiveSource,
  RouteSwitchOptions,
  SwitchCommandOutcome,
} from "../services";
import { formatTokens, pluralText } from "../shared/format";
import { Prompter } from "../ui/prompter";
import { beforeAfterText, planBeforeAfter, pricePickRow } from "../viewModel/compactionPrice";
import * as notify from "../ui/notify";
import { openSummaryDiff } from "../ui/summaryDocuments";
import { entryWordsOf } from "../viewModel/treeText";
import { BridgeError } from "./client";
import { SUMMARY_COMPACT_SINCE, type ProvidedCompaction } from "../bridge/protocol";
import { SessionChangedError } from "../core/flows/write";
import { compareVersions } from "../core/pi/versions";
import * as fs from "node:fs";
import { livePreviewNumbers } from "./livePreview";
import { describePi, type LiveBridgeStats, type LiveResolution, type LiveTarget } from "./target";

/** How a live operation is named in the log and in messages. */
interface LiveOperation {
  /** In the log: `live bridge: <log> <file>: …`. */
  log: string;
  /** `<noun> cancelled in pi.` */
  noun: string;
  /** `pi could not <verb>: …`, `… cannot be used to <verb>: …`. */
  verb: string;
}
/** The outcomes every failed request can have (both commands' outcome types include them). */
type RequestFailure =
  | { kind: "cancelled"; file: string; message: string }
  | { kind: "error"; file: string; errorKind: string; message: string };

// the noun and verb go into messages: localised when read (the log keeps `log`)
const COMPACT: LiveOperation = {
  log: "compact",
  get noun() {
    return vscode.l10n.t("compaction");
  },
  get verb() {
    return vscode.l10n.t("compact");
  },
};
const SWITCH: LiveOperation = {
  log: "switch",
  get noun() {
    return vscode.l10n.t("branch switch");
  },
  get verb() {
    return vscode.l10n.t("switch branches");
  },
};

/** The routes of the live bridge service. */
export class LiveRoutes {
  /** The live Compact preview's quick pick, recorded (the integration tests read and answer it). */
  readonly prompter = new Prompter();

  constructor(
    private readonly services: BaseServices,
    private readonly stats: LiveBridgeStats,
    /** Find a live bridge for a session file now (`LiveBridgeService.resolve`). */
    private readonly resolve: (file: string) => Promise<LiveResolution>,
  ) {}

  /** Tell the user why a bridge for this session cannot be used; the outcome for the command. */
  private refuse(
    file: string,
    what: string,
    resolution: Extract<LiveResolution, { kind: "problem" }>,
  ): { kind: "error"; file: string; errorKind: string; message: string } {
    const message = vscode.l10n.t(
      "pi runs on this session with a live bridge, but it cannot be used to {0}: {1} Nothing was written.",
      what,
      resolution.error.message,
    );
    this.services.log.warn(`live bridge: ${file}: ${message}`);
    void notify.error(`${message}`);
    return { kind: "error", file, errorKind: `bridge-${resolution.error.code}`, message };
  }

  /**
   * A compact or navigate request failed: log it, tell the user, and the command's outcome.
   * `cancelled` → info, outcome `cancelled`; `busy` (pi's "Wait for …") → warning, `error`/`busy`;
   * then the operation's own cases (`special`, undefined = none applies); else an error message
   * `pi could not <verb>: <message>` and `error` with the bridge's code.
   */
  private failed<T extends CompactCommandOutcome | SwitchCommandOutcome = never>(
    file: string,
    op: LiveOperation,
    error: unknown,
    special?: (e: BridgeError) => T | undefined,
  ): RequestFailure | T {
    const e = error instanceof BridgeError ? error : new BridgeError("failed", String(error));
    this.services.log.warn(`live bridge: ${op.log} ${file}: ${e.code}: ${e.message}`);
    if (e.code === "cancelled") {
      void notify.info(vscode.l10n.t("{0} cancelled in pi. Nothing was written.", op.noun));
      return { kind: "cancelled", file, message: e.message };
    }
    if (e.code === "busy") {
      void notify.warn(vscode.l10n.t("pi is busy: {0} Nothing was sent.", e.message));
      return { kind: "error", file, errorKind: "busy", message: e.message };
    }
    const handled = special?.(e);
    if (handled !== undefined) return handled;
    void notify.error(vscode.l10n.t("pi could not {0}: {1}", op.verb, e.message));
    return { kind: "error", file, errorKind: e.code, message: e.message };
  }

  /**
   * A summary made by our summarizer, appended by the running pi itself: its bridge's `compact` with
   * the `summary` (pi takes it from `session_before_compact` when its own preparation keeps from
   * the same entry, and writes the entry as its compaction). Undefined when no live bridge serves
   * `file`. @throws {SessionChangedError} when pi's session moved on since the plan (its leaf, or
   * its cut), an Error with what to do otherwise (an older bridge, pi's refusal); nothing written.
   */
  async routeCompactionSummary(
    file: string,
    summary: ProvidedCompaction & { details: NonNullable<ProvidedCompaction["details"]> },
    leafId: string | null,
  ): Promise<{ entryId: string; bytesBefore: number; live: LiveSource } | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") throw new Error(resolution.error.message);
    const { announcement, connection } = resolution.target;
    const pi = describePi(announcement);
    if (compareVersions(announcement.bridgeVersion, SUMMARY_COMPACT_SINCE) < 0)
      throw new Error(
        vscode.l10n.t(
          "The live bridge in {0} is version {1}; a summary from another summarizer needs {2} or later. Update it (Pi Context: Install Live Bridge), then /reload in pi. Nothing was written.",
          pi,
          announcement.bridgeVersion,
          SUMMARY_COMPACT_SINCE,
        ),
      );
    const state = await connection.request("state", {}).then(
      (s) => s,
      () => connection.state,
    );
    if (state.leafId !== leafId)
      throw new SessionChangedError(
        vscode.l10n.t("pi's session moved on since the summary was planned. Nothing was written."),
      );
    const bytesBefore = fs.statSync(file).size;
    this.stats.compactions++;
    this.services.log.info(
      `live bridge: compact ${file} in ${pi} with a summary of ours (${summary.summary.length} characters)`,
    );
    try {
      const result = await connection.request("compact", { summary }, { timeoutMs: 60_000 });
      if (!result.entryId) throw new Error(vscode.l10n.t("pi did not report the compaction entry it wrote."));
      await this.waitForEntry(file, result.entryId);
      return {
        entryId: result.entryId,
        bytesBefore,
        live: {
          pid: announcement.pid,
          piVersion: announcement.piVersion,
          bridgeVersion: announcement.bridgeVersion,
          activity: connection.state.activity,
        },
      };
    } catch (error) {
      if (error instanceof BridgeError && /the session changed since it was planned/.test(error.message))
        throw new SessionChangedError(error.message);
      throw error;
    }
  }

  /** Wait until the session index has `entryId` (see {@link waitForEntry}). */
  private waitForEntry(file: string, entryId: string | null, timeoutMs = 5000): Promise<void> {
    return waitForEntry(this.services, file, entryId, timeoutMs);
  }

  /**
   * "Pi Context: Compact Session…" in the running pi. Called by `compaction/command.ts` after the instructions
   * box. Resolves undefined when no live bridge serves `file` (the file-based flow runs).
   */
  async routeCompaction(
    file: string,
    instructions: string,
    options: RouteCompactionOptions = {},
  ): Promise<CompactCommandOutcome | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") return this.refuse(file, COMPACT.verb, resolution);
    const { announcement, connection } = resolution.target;
    const keepFrom = options.keepFrom;
    // an older bridge ignores keepFrom and would compact at pi's own cut: never send it one
    if (keepFrom !== undefined && !bridgeSupportsKeepFrom(announcement.bridgeVersion)) {
      const message = vscode.l10n.t(
        "{0} runs the live bridge {1}, which cannot keep from a chosen entry ({2} can): install the current bridge (Pi Context: Install Live Bridge) and run /reload in pi. Nothing was sent or written.",
        describePi(announcement),
        announcement.bridgeVersion,
        KEEP_FROM_BRIDGE_VERSION,
      );
      this.services.log.warn(`live bridge: compact ${file}: ${message}`);
      void notify.error(message);
      return { kind: "error", file, errorKind: "bridge-outdated", message };
    }
    const current =
      this.services.sessions.current && sameFile(this.services.sessions.current.file, file)
        ? this.services.sessions.current
        : undefined;
    const preview = current?.analysis.inspect.compaction ?? null;
    const previousCompactionId = preview?.previousCompactionId ?? undefined;
    const label =
      options.title ?? `"${current?.label ?? sessionLabel((await this.services.sessions.sessionInfo(file)) ?? {})}"`;
    if (!options.skipPreview) {
      const go = await this.confirmLiveCompaction(file, instructions, label, resolution.target, keepFrom);
      if (!go) return { kind: "declined", file };
    }
    this.stats.compactions++;
    this.services.log.info(
      `live bridge: compact ${file} in ${describePi(announcement)}${instructions ? `, instructions ${JSON.stringify(instructions)}` : ""}`,
    );
    try {
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t("pi is compacting {0}", label),
          cancellable: true,
        },
        (progress, token) => {
          const signal = linkedSignal(token, options.signal);
          progress.report({
            message: vscode.l10n.t(
              "with pi's model{0}…",
              connection.state.model ? ` ${connection.state.model.provider}/${connection.state.model.id}` : "",
            ),
          });
          return connection.request(
            "compact",
            {
              ...(instructions ? { customInstructions: instructions } : {}),
              ...(keepFrom !== undefined ? { keepFrom } : {}),
            },
            { signal },
          );
        },
      );
      await this.waitForEntry(file, result.entryId);
      const entryId = result.entryId ?? result.leafId ?? "";
      this.services.log.info(
        `live bridge: pi wrote compaction ${entryId} (tokensBefore ${result.tokensBefore}, estimated after ${result.estimatedTokensAfter ?? "?"})`,
      );
      if (entryId)
        await openSummaryDiff(file, previousCompactionId, entryId, label).catch((error: unknown) =>
          this.services.log.warn(`summary diff: ${String(error)}`),
        );
      const after = result.estimatedTokensAfter;
      void notify
        .info(
          vscode.l10n.t(
            "pi compacted {0} — {1} → {2} tokens (pi's estimate).",
            label,
            result.tokensBefore.toLocaleString("en-US"),
            after !== undefined ? `≈${after.toLocaleString("en-US")}` : "?",
          ),
          ...(entryId ? [vscode.l10n.t("Show Summary Diff")] : []),
        )
        .then((choice) =>
          choice && entryId ? openSummaryDiff(file, previousCompactionId, entryId, label) : undefined,
        );
      const outcome: CompactCommandOutcome & { live: { pid: number; piVersion: string } } = {
        kind: "compacted",
        file,
        entryId,
        ...(previousCompactionId ? { previousCompactionId } : {}),
        tokensBefore: result.tokensBefore,
        tokensAfter: after ?? this.services.sessions.current?.analysis.inspect.contextTokens ?? 0,
        firstKeptEntryId: result.firstKeptEntryId,
        live: { pid: announcement.pid, piVersion: announcement.piVersion },
      };
      return outcome;
    } catch (error) {
      return this.failed<CompactCommandOutcome>(file, COMPACT, error, (e) => {
        if (e.code === "failed" && /^(Nothing to compact|Already compacted)/.test(e.message)) {
          void notify.info(`${e.message}`);
          return { kind: "nothing", file, message: e.message };
        }
        if (e.code === "closed" || e.code === "timeout") {
          const message = vscode.l10n.t(
            "lost the live bridge of {0} during the compaction: {1} pi may still write the compaction; the session view shows it when it does.",
            describePi(announcement),
            e.message,
          );
          void notify.error(`${message}`);
          return { kind: "error", file, errorKind: `bridge-${e.code}`, message };
        }
        return undefined;
      });
    }
  }

  /**
   * The live Compact preview: pi's context now, the plan's before → after and its Cost row (the
   * view-model functions of the headless preview, `viewModel/compactionPrice.ts`, over
   * {@link livePreviewNumbers}), Cancel. Picking the Cost row shows the pick again.
   * @returns true for "Compact now in pi".
   */
  private async confirmLiveCompaction(
    file: string,
    instructions: string,
    label: string,
    target: LiveTarget,
    keepFrom: string | undefined,
  ): Promise<boolean> {
    const { announcement, connection } = target;
    const state = connection.state;
    const numbers = await livePreviewNumbers(
      this.services,
      file,
      instructions,
      state,
      { pid: announcement.pid, piVersion: announcement.piVersion, bridgeVersion: announcement.bridgeVersion },
      Date.now(),
      keepFrom,
    );
    const usage = state.usage
      ? `${state.usage.tokens === null ? "?" : formatTokens(state.usage.tokens)}/${formatTokens(state.usage.contextWindow)}`
      : vscode.l10n.t("unknown");
    const plan = "notKnown" in numbers ? undefined : numbers.plan;
    const tokens = beforeAfterText("notKnown" in numbers ? numbers : planBeforeAfter(numbers.plan));
    const cost = pricePickRow("notKnown" in numbers ? numbers : numbers.price);
    const preview = plan?.preview;
    type Item = vscode.QuickPickItem & { action: "go" | "cost" | "cancel" };
    const items: Item[] = [
      {
        action: "go",
        label: vscode.l10n.t("$(fold) Compact now in pi"),
        description: vscode.l10n.t("{0} · {1}", tokens, describePi(announcement)),
        detail: vscode.l10n.t(
          "pi summarizes with its own model{0} and writes the compaction{1}.{2} Context now: {3}.",
          state.model ? ` (${state.model.provider}/${state.model.id})` : "",
          instructions ? vscode.l10n.t("; focus: {0}", instructions) : "",
          preview
            ? vscode.l10n.t(
                " Expected: summarize {0}, keep from {1}.",
                pluralText(
                  preview.summarizedEntryIds.length + preview.turnPrefixEntryIds.length,
                  vscode.l10n.t("{0} entry"),
                  vscode.l10n.t("{0} entries"),
                ),
                preview.firstKeptEntryId,
              )
            : "",
          usage,
        ),
      },
      { action: "cost", label: cost.label, detail: cost.detail },
      {
        action: "cancel",
        label: vscode.l10n.t("$(close) Cancel"),
        detail: vscode.l10n.t("Nothing is sent, nothing is written."),
      },
    ];
    for (;;) {
      const pick = await this.prompter.pick(items, {
        title:
          keepFrom === undefined
            ? vscode.l10n.t("Compact {0} in the running pi?", label)
            : vscode.l10n.t("Compact {0} up to {1} in the running pi?", label, keepFrom),
        placeholder: vscode.l10n.t("pi runs on this session: the running pi does the compaction · {0}", tokens),
      });
      if (pick?.action !== "cost") return pick?.action === "go";
    }
  }

  /**
   * "Switch to Here…" in the running pi (pi's `/tree` navigation). Called by `tree/register.ts`.
   * `given`: the choice when the caller already has one; otherwise `ask` shows pi's question.
   * Resolves undefined when no live bridge serves `file`.
   */
  async routeSwitch(
    file: string,
    targetId: string,
    options: RouteSwitchOptions,
  ): Promise<SwitchCommandOutcome | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") return this.refuse(file, SWITCH.verb, resolution);
    const { announcement, connection } = resolution.target;
    // pi's leaf now (a push may still be on its way): pi's navigateTree is a no-op at its own leaf
    const leafId = await connection.request("state", {}).then(
      (s) => s.leafId,
      () => connection.state.leafId,
    );
    if (leafId === targetId) {
      if (!options.quiet) void notify.info(vscode.l10n.t("pi is already at this point."));
      return { kind: "noop", file, targetId };
    }
    let plan: SwitchPlan | undefined;
    try {
      plan = await planSwitch(file, targetId, {
        agentDir: this.services.sessions.agentDir(),
        projectSettings: this.services.config().projectSettings,
        guardSeconds: 0,
        procRoot: null,
        pi: this.services.pi.current,
      });
    } catch (error) {
      // pi decides (e.g. an entry pi has and the file does not show yet); the question needs a plan
      if (!options.given) {
        const message = (error as Error).message;
        void notify.error(vscode.l10n.t("branch switch failed: {0}", message));
        return { kind: "error", file, errorKind: "error", message };
      }
    }
    const choice = options.given ?? (plan ? await options.ask(plan, false) : undefined);
    if (!choice) return { kind: "declined", file };
    this.stats.switches++;
    this.services.log.info(
      `live bridge: switch ${file} → ${targetId} in ${describePi(announcement)} (summarize ${choice.summarize}${choice.label ? `, label ${JSON.stringify(choice.label)}` : ""})`,
    );
    try {
      const params = {
        targetId,
        summarize: choice.summarize,
        ...(choice.customInstructions ? { customInstructions: choice.customInstructions } : {}),
        ...(choice.label ? { label: choice.label } : {}),
      };
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: choice.summarize
            ? vscode.l10n.t("pi is summarizing the branch you leave")
            : vscode.l10n.t("Switching branch in pi"),
          cancellable: choice.summarize,
        },
        (_progress, token) => connection.request("navigate", params, { signal: linkedSignal(token, options.signal) }),
      );
      if (result.cancelled) {
        const message = result.aborted
          ? vscode.l10n.t("Branch summarization cancelled")
          : vscode.l10n.t("Navigation cancelled (a pi extension cancelled it)");
        void notify.info(vscode.l10n.t("{0}. Nothing was written.", message));
        return { kind: "cancelled", file, message };
      }
      const last = result.entries[result.entries.length - 1];
      await this.waitForEntry(file, last?.id ?? null);
      const editorText = plan?.returnsText ? plan.editorText : undefined;
      if (!options.quiet) {
        const current = this.services.sessions.current;
        const where = entryWordsOf(
          result.newLeafId,
          current && sameFile(current.file, file) ? current.session : undefined,
          plan?.session,
        );
        void notify.info(
          vscode.l10n.t(
            "pi switched to {0}{1}.{2}",
            where,
            result.entries.length
              ? vscode.l10n.t(" (wrote {0})", result.entries.map((e) => e.type.replace("_", " ")).join(" + "))
              : "",
            editorText !== undefined
              ? vscode.l10n.t(" In pi's terminal UI the message you picked is back in the editor.")
              : "",
          ),
        );
      }
      return {
        kind: "switched",
        file,
        targetId,
        newLeafId: result.newLeafId,
        entries: result.entries,
        ...(editorText !== undefined ? { editorText } : {}),
      };
    } catch (error) {
      return this.failed(file, SWITCH, error);
    }
  }

  /**
   * Set or clear a label in the running pi (`pi.setLabel`). Called by `tree/register.ts`.
   * @returns undefined when no live bridge serves `file`; else `{ result }` (undefined result = failed, reported).
   */
  async routeLabel(
    file: string,
    targetId: string,
    label: string | undefined,
  ): Promise<{ result: LabelResult | undefined } | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") {
      this.refuse(file, vscode.l10n.t("label entries"), resolution);
      return { result: undefined };
    }
    const { announcement, connection } = resolution.target;
    const text = label?.trim() || undefined;
    this.stats.labels++;
    try {
      const r = await connection.request("setLabel", { targetId, ...(text ? { label: text } : {}) });
      this.services.log.info(
        `live bridge: label ${targetId} → ${text ?? "(cleared)"} in ${describePi(announcement)} (entry ${r.entryId})`,
      );
      await this.waitForEntry(file, r.entryId);
      return { result: r.entryId ? { entryId: r.entryId, label: text ?? null } : undefined };
    } catch (error) {
      const message = (error as Error).message;
      this.services.log.warn(`live bridge: label ${file}: ${message}`);
      void notify.error(vscode.l10n.t("pi could not write the label: {0}", message));
      return { result: undefined };
    }
  }

  /**
   * Name the session in the running pi (`pi.setSessionName`, pi's `/name`).
   * @returns undefined when no live bridge serves `file`; else `{ result }` (undefined result = failed, reported).
   */
  async routeName(file: string, name: string): Promise<NameRouteResult | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") {
      this.refuse(file, vscode.l10n.t("name the session"), resolution);
      return { result: undefined };
    }
    const { announcement, connection } = resolution.target;
    try {
      const r = await connection.request("setSessionName", { name });
      this.services.log.info(`live bridge: named ${file} "${r.name ?? ""}" in ${describePi(announcement)}`);
      await this.waitForEntry(file, r.entryId);
      return { result: r };
    } catch (error) {
      const message = (error as Error).message;
      this.services.log.warn(`live bridge: name ${file}: ${message}`);
      void notify.error(vscode.l10n.t("pi could not name the session: {0}", message));
      return { result: undefined };
    }
  }
}

/** Name the session in the running pi (see {@link LiveRoutes.routeName}). */
export type NameRouteResult = { result: { entryId: string | null; name: string | null } | undefined };

/** An abort signal for a request: aborted when the progress notification is cancelled or `outer` aborts. */
function linkedSignal(token: vscode.CancellationToken, outer: AbortSignal | undefined): AbortSignal {
  const controller = new AbortController();
  token.onCancellationRequested(() => controller.abort());
  outer?.addEventListener("abort", () => controller.abort(), { once: true });
  return controller.signal;
}

/**
 * Wait until the session index has `entryId` (pi wrote it; our watcher reads it), at most
 * `timeoutMs`; returns at once without an id or when another session is shown.
 */
export async function waitForEntry(
  services: BaseServices,
  file: string,
  entryId: string | null,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await services.sessions.refresh().catch(() => undefined);
    const current = services.sessions.current;
    if (
      !entryId ||
      !current ||
      !sameFile(current.file, file) ||
      current.session.byId.has(entryId) ||
      Date.now() > deadline
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
