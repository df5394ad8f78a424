/**
 * Context edits in the running pi, through its live bridge (`contextEdit`): pi appends them itself
 * — at once while idle (its next request and its footer use them), or, while it answers, at its
 * next turn boundary (queued until then; shown as pending in the tree and the panel). The caller
 * (`trim/command.ts`) planned and previewed the edits on the file; this route sends the drafts,
 * waits for pi's entries to reach the session view, and reports what pi did. A queued batch is
 * followed through the bridge's state pushes: applied → a notice; dropped → an error saying why.
 */

import type { BridgeEditBatch } from "../bridge/protocol";
import type { ContextEditDraft } from "../core/rules/contextEdit";
import type { BaseServices, LiveEditOutcome, LiveSource, PendingContextEdits } from "../services";
import { plural, pluralText } from "../shared/format";
import * as notify from "../ui/notify";
import { BridgeError, type BridgeConnection } from "./client";
import { waitForEntry } from "./routes";
import { describePi, type LiveBridgeStats, type LiveResolution, type LiveTarget } from "./target";
import * as l10n from "@vscode/l10n";

/** The context-edit route of the live bridge service. */
export class LiveEditRoute {
  constructor(
    private readonly services: BaseServices,
    private readonly stats: LiveBridgeStats,
    private readonly resolve: (file: string) => Promise<LiveResolution>,
    private readonly liveFor: (file: string) => LiveTarget | undefined,
  ) {}

  /** See `LiveBridge.routeContextEdit`. */
  async routeContextEdit(
    file: string,
    drafts: readonly ContextEditDraft[],
    leafId: string | null,
  ): Promise<LiveEditOutcome | undefined> {
    const resolution = await this.resolve(file);
    if (resolution.kind === "none") return undefined;
    if (resolution.kind === "problem") {
      const message = l10n.t(
        "pi runs on this session with a live bridge, but it cannot be used to edit the context: {0} Nothing was written.",
        resolution.error.message,
      );
      this.services.log.warn(`live bridge: ${file}: ${message}`);
      void notify.error(message);
      return { kind: "error", errorKind: `bridge-${resolution.error.code}`, message };
    }
    const { announcement, connection } = resolution.target;
    const live: LiveSource = {
      pid: announcement.pid,
      piVersion: announcement.piVersion,
      bridgeVersion: announcement.bridgeVersion,
      activity: connection.state.activity,
    };
    this.stats.contextEdits++;
    this.services.log.info(
      `live bridge: ${plural(drafts.length, "context edit")} on ${file} in ${describePi(announcement)} (${drafts.map((d) => `${d.targetId} ${d.replacement === null ? "omit" : "replace"}`).join(", ")})`,
    );
    try {
      const r = await connection.request("contextEdit", { drafts: [...drafts], leafId });
      if (r.status === "queued") {
        this.follow(file, connection, r.batchId, describePi(announcement));
        return { kind: "queued", batchId: r.batchId, targetIds: drafts.map((d) => d.targetId), live };
      }
      await waitForEntry(this.services, file, r.entries[r.entries.length - 1]?.id ?? null);
      this.services.log.info(`live bridge: pi appended ${r.entries.map((e) => e.id).join(", ")}`);
      return { kind: "applied", entries: r.entries, leafId: r.leafId, live };
    } catch (error) {
      const e = error instanceof BridgeError ? error : new BridgeError("failed", String(error));
      this.services.log.warn(`live bridge: context edit ${file}: ${e.code}: ${e.message}`);
      const message =
        e.code === "busy"
          ? l10n.t("pi is busy: {0} Nothing was written.", e.message)
          : l10n.t("pi did not take the context edits: {0} Nothing was written.", e.message);
      if (e.code === "busy") void notify.warn(message);
      else void notify.error(message);
      return { kind: "error", errorKind: e.code === "busy" ? "busy" : e.code, message };
    }
  }

  /** Tell the user when pi applies (or drops) a queued batch; stop when the connection closes. */
  private follow(file: string, connection: BridgeConnection, batchId: string, pi: string): void {
    let last: BridgeEditBatch["status"] = "queued";
    const done = (batch: BridgeEditBatch | undefined, closed: boolean) => {
      offState();
      offClose();
      if (closed) {
        this.services.log.warn(`live bridge: ${pi} went away before applying batch ${batchId}`);
        void notify.warn(
          l10n.t("{0} went away before its turn boundary: the queued context edits were not applied.", pi),
        );
        return;
      }
      if (!batch) return;
      if (batch.status === "applied") {
        this.services.log.info(`live bridge: ${pi} applied batch ${batchId} (${batch.entryIds?.join(", ")})`);
        void waitForEntry(this.services, file, batch.entryIds?.[batch.entryIds.length - 1] ?? null).then(() =>
          notify.info(
            l10n.t(
              "pi applied {0} at its turn boundary.",
              pluralText(batch.targetIds.length, l10n.t("{0} context edit"), l10n.t("{0} context edits")),
            ),
          ),
        );
      } else if (batch.status === "dropped") {
        this.services.log.warn(`live bridge: ${pi} dropped batch ${batchId}: ${batch.message ?? ""}`);
        void notify.error(
          l10n.t("pi did not apply the queued context edits: {0}", batch.message ?? l10n.t("no reason given")),
        );
      }
    };
    const offState = connection.onState((state) => {
      const batch = state.contextEdits?.find((b) => b.batchId === batchId);
      if (!batch || batch.status === last) return;
      last = batch.status;
      if (batch.status === "applied" || batch.status === "dropped" || batch.status === "cancelled") done(batch, false);
    });
    const offClose = connection.onClose(() => done(undefined, true));
  }

  /** See `LiveBridge.pendingContextEdits`. */
  pending(file: string): PendingContextEdits[] {
    const target = this.liveFor(file);
    const batches = target?.connection.state.contextEdits ?? [];
    return batches
      .filter(
        (b): b is BridgeEditBatch & { status: "queued" | "handed" } => b.status === "queued" || b.status === "handed",
      )
      .map((b) => ({ batchId: b.batchId, targetIds: [...b.targetIds], status: b.status }));
  }
}
