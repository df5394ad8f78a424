/**
 * pi 1.6.0's leaf when the last line is not an entry with a string id (`read/oddTail.ts`): a falsy id
 * leaves `getBranch()` empty (no usage, default model, nothing to compact) while the projection follows
 * the line's `parentId`; either way pi's next entry starts a new root once the file is re-read.
 */

import type { EntryRecord } from "../read/entries";
import { ODD_TAIL_ID, type OddTail } from "../read/oddTail";
import type { SessionView } from "../read/overlay";
import type { SessionEntry } from "../types";
import * as l10n from "@vscode/l10n";

export interface PiLeafView {
  /** The session with that line as its last entry (id {@link ODD_TAIL_ID}, or `""` as written). */
  view: SessionView;
  leafId: string;
  /** pi's `getBranch()` is empty (a falsy id): no usage trusted, no model selected, nothing to compact. */
  branchEmpty: boolean;
  tail: OddTail;
}

export interface OddTailSession extends SessionView {
  readonly oddTail: OddTail | undefined;
  /** The odd line is re-read from these bytes when its body is needed. */
  readLineBytes(record: EntryRecord): Buffer;
}

/** pi's view when the last line is odd, else undefined. */
export function piLeafView(session: OddTailSession): PiLeafView | undefined {
  const tail = session.oddTail;
  if (!tail) return undefined;
  if (tail.record.id !== ODD_TAIL_ID)
    // an entry with the id "": in the index already, as the last record
    return { view: session, leafId: tail.record.id, branchEmpty: !tail.truthyId, tail };
  const records = [...session.records, tail.record];
  const byId = new Map(session.byId);
  byId.set(ODD_TAIL_ID, tail.record);
  let body: SessionEntry | undefined;
  const view: SessionView = {
    records,
    byId,
    leafId: ODD_TAIL_ID,
    readEntry: (record) => {
      if (record !== tail.record) return session.readEntry(record);
      body ??= {
        ...(JSON.parse(session.readLineBytes(record).toString("utf8")) as object),
        id: ODD_TAIL_ID,
      } as SessionEntry;
      return body;
    },
  };
  return { view, leafId: ODD_TAIL_ID, branchEmpty: !tail.truthyId, tail };
}

/** What the odd last line does to pi, in words; `parentRef` describes the entry its `parentId` names. */
export function oddTailConsequence(tail: OddTail, parentRef: string | undefined): string {
  if (!parentRef)
    return tail.truthyId
      ? l10n.t(
          "pi resumes at this line, with an empty context (the model sees none of the conversation); once the file is read again, its next entry starts a new root",
        )
      : l10n.t(
          "pi resumes with no leaf and an empty context (the model sees none of the conversation), and its next prompt starts a new root",
        );
  return tail.truthyId
    ? l10n.t(
        "pi resumes at this line after {0}; its next entry names this line's id as its parent, which no one can resolve once the file is read again (a new root)",
        parentRef,
      )
    : l10n.t(
        "pi has no leaf: it still sends the conversation up to {0}, but counts it by chars/4 only (no usage), uses the default model, finds nothing to compact, and its next prompt starts a new root",
        parentRef,
      );
}
