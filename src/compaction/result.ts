/**
 * The end of a compaction that wrote its entry — by pi-context's summarizer (`command.ts`) or by the
 * user's own pi (`withPi.ts`): the session is read again, the summary diff opens, one toast says
 * what was written (with "Show Summary Diff"), and the command's outcome is built. Nothing after
 * this point may report the compaction as failed: the entry is in the file.
 */

import type { CompactCommandOutcome, Services } from "../services";
import * as notify from "../ui/notify";
import { openSummaryDiff } from "../ui/summaryDocuments";
import * as l10n from "@vscode/l10n";

/** What was written, as both flows know it. */
export interface CompactedEntry {
  file: string;
  /** The session's title for messages and the diff (`planTitle`). */
  label: string;
  entryId: string;
  previousCompactionId?: string | null | undefined;
  /** pi's estimates before and after (tokens); null after = the file could not be read back. */
  tokensBefore: number;
  tokensAfter: number | null;
  firstKeptEntryId: string;
  /** The toast's text. */
  message: string;
  /** Set when the user's pi wrote the entry. */
  by?: "pi";
}

/** Refresh, open the summary diff, say what was written; returns the `compacted` outcome. */
export async function reportCompacted(services: Services, c: CompactedEntry): Promise<CompactCommandOutcome> {
  const previous = c.previousCompactionId ?? undefined;
  void services.sessions.refresh().catch(() => undefined);
  await openSummaryDiff(c.file, previous, c.entryId, c.label).catch((error: unknown) =>
    services.log.warn(`summary diff: ${String(error)}`),
  );
  void notify
    .info(c.message, l10n.t("Show Summary Diff"))
    .then((choice) => (choice ? openSummaryDiff(c.file, previous, c.entryId, c.label) : undefined));
  return {
    kind: "compacted",
    file: c.file,
    entryId: c.entryId,
    ...(previous ? { previousCompactionId: previous } : {}),
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    firstKeptEntryId: c.firstKeptEntryId,
    ...(c.by ? { by: c.by } : {}),
  };
}
