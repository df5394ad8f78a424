/** pi's `prepareCompaction` (or `prepareCompactionAt`: "Compact up to here") and its refusals. */

import {
  isInvalidCut,
  isPrepared,
  NOTHING_TO_COMPACT_MESSAGES,
  prepareCompaction,
  prepareCompactionAt,
  type CompactionPreparation,
  type InvalidCut,
  type NothingToCompact,
} from "../rules/compaction";
import type { EntryIndex } from "../rules/tree";
import type { BodyReader, CompactionSettings } from "../rules/tokens";
import type { PiRules } from "../pi/versions";
import * as l10n from "@vscode/l10n";

/** pi would not compact (its message is in `message`). */
export class NothingToCompactError extends Error {
  constructor(
    readonly reason: NothingToCompact,
    message = NOTHING_TO_COMPACT_MESSAGES[reason],
  ) {
    super(message);
    this.name = "NothingToCompactError";
  }
}

/**
 * pi's preparation at the leaf, or cut at `keepFrom`.
 * @throws {NothingToCompactError}; {@link InvalidCutPointError} when `keepFrom` is no valid cut point.
 */
export function prepareOrThrow(
  session: EntryIndex & { leafId: string | null } & BodyReader,
  settings: CompactionSettings,
  rules: Pick<PiRules, "nestedCallFileOps">,
  keepFrom: string | undefined,
): CompactionPreparation {
  const prepared =
    keepFrom === undefined
      ? prepareCompaction(session, settings, session, undefined, rules)
      : prepareCompactionAt(session, settings, session, keepFrom, { rules });
  if (isInvalidCut(prepared))
    throw new InvalidCutPointError(prepared, (id) => {
      const record = session.byId.get(id);
      return record?.role ?? record?.type;
    });
  if (isPrepared(prepared)) return prepared;
  const nothingBefore = keepFrom !== undefined && prepared.reason === "nothing-to-compact";
  throw new NothingToCompactError(
    prepared.reason,
    nothingBefore
      ? l10n.t("Nothing before entry {0} to summarize: pi keeps the whole context from there already.", keepFrom)
      : undefined,
  );
}

/** An entry pi would not cut at; `nearest` are the nearest ids pi can keep from (oldest first). */
export class InvalidCutPointError extends Error {
  readonly code: InvalidCut["code"];
  readonly entryId: string;
  readonly nearest: string[];
  constructor(invalid: InvalidCut, roleOf: (id: string) => string | undefined) {
    super(invalidCutText(invalid, roleOf));
    this.name = "InvalidCutPointError";
    this.code = invalid.code;
    this.entryId = invalid.entryId;
    this.nearest = invalid.nearest;
  }
}

function invalidCutText(invalid: InvalidCut, roleOf: (id: string) => string | undefined): string {
  const id = invalid.entryId;
  const why: Record<InvalidCut["code"], () => string> = {
    unknown: () => l10n.t("There is no entry {0} in this session.", id),
    "off-branch": () => l10n.t("Entry {0} is not on the current branch.", id),
    summarized: () => l10n.t("Entry {0} was summarized by an earlier compaction: it is no longer in the context.", id),
    "tool-result": () => l10n.t("Entry {0} is a tool result: pi never cuts between a tool call and its result.", id),
    "no-message": () =>
      l10n.t(
        "Entry {0} sends no message to the model (a label, model change, context edit…): pi does not cut there.",
        id,
      ),
    omitted: () => l10n.t("Entry {0} is omitted from the context by a context edit: pi does not cut there.", id),
    compaction: () => l10n.t("Entry {0} is a compaction: pi does not cut there.", id),
    system: () => l10n.t("Entry {0} is a system message: pi does not cut there.", id),
  };
  const nearest = invalid.nearest.map((n) => {
    const role = roleOf(n);
    return role ? `${n} (${role})` : n;
  });
  // an entry that is not on the branch has no neighbours there: nothing to say about the context
  const offer =
    nearest.length > 0
      ? l10n.t("The nearest entries pi can keep from: {0}.", nearest.join(", "))
      : invalid.code === "unknown" || invalid.code === "off-branch"
        ? ""
        : l10n.t("The context has no entry pi could keep from.");
  return offer ? `${why[invalid.code]()} ${offer}` : why[invalid.code]();
}
