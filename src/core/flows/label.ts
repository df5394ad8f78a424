/** pi's `appendLabelChange` on a file: the one flow that writes a label entry. */

import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess } from "../access/words";
import { buildLabelEntry } from "../rules/branch";
import { SessionFile } from "../read/session";
import type { LabelEntry } from "../types";
import { appendEntries, expectationOf, newEntryId } from "./write";
import type { SwitchPlanOptions } from "./switch";
import { assertPiCanOpen } from "./preflight";

export interface LabelResult {
  file: string;
  entry: LabelEntry;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * A `label` entry on the file's leaf (it becomes the leaf, as in pi); empty or undefined `label` clears.
 * @throws Error `Entry X not found` (pi's), {@link LiveSessionError}, {@link UnsafeSessionWriteError},
 *   {@link SessionChangedError}.
 */
export async function appendLabelChange(
  file: string,
  targetId: string,
  label: string | undefined,
  options: Pick<SwitchPlanOptions, "guardSeconds" | "procRoot" | "processes" | "announced" | "force" | "surface">,
  now: () => Date = () => new Date(),
): Promise<LabelResult> {
  const session = await SessionFile.open(file, { digest: true });
  const expectation = expectationOf(session);
  assertPiCanOpen(session, "label entries in", options.surface);
  if (!session.byId.has(targetId)) throw new Error(`Entry ${targetId} not found`);
  assertAccess(await accessOfSession(session, options), ACTIONS.label, options);
  const text = label?.trim() || undefined;
  const entry = buildLabelEntry({
    id: newEntryId(session.byId),
    parentId: session.leafId,
    timestamp: now().toISOString(),
    targetId,
    label: text,
  });
  const bytesAfter = appendEntries(expectation, [entry]);
  return { file, entry, bytesBefore: expectation.size, bytesAfter };
}
