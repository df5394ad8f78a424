/**
 * pi's `/name` (`appendSessionInfo`): a `session_info` entry on the leaf, line breaks → one space,
 * trimmed. Behind the live guard: a running pi would not see it.
 */

import { SessionFile } from "../read/session";
import { normalizeSessionName } from "../rules/sessionLabel";
import type { SessionInfoEntry } from "../types";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { appendEntries, expectationOf, newEntryId } from "./write";
import { assertPiCanOpen } from "./preflight";

export interface NameResult {
  file: string;
  entry: SessionInfoEntry;
  bytesBefore: number;
  bytesAfter: number;
}

export class EmptySessionNameError extends Error {
  constructor() {
    super("Session name cannot be empty");
    this.name = "EmptySessionNameError";
  }
}

export function buildSessionInfoEntry(input: {
  id: string;
  parentId: string | null;
  timestamp: string;
  name: string;
}): SessionInfoEntry {
  return {
    type: "session_info",
    id: input.id,
    parentId: input.parentId,
    timestamp: input.timestamp,
    name: normalizeSessionName(input.name),
  } as SessionInfoEntry;
}

/**
 * Append pi's `session_info` entry; nothing is written on any error.
 * @throws {EmptySessionNameError}, {@link LiveSessionError}, {@link SessionChangedError},
 *   {@link UnsafeSessionWriteError}.
 */
export async function appendSessionName(
  file: string,
  name: string,
  options: SessionAccessOptions & { surface?: MessageSurface },
  now: () => Date = () => new Date(),
): Promise<NameResult> {
  if (!normalizeSessionName(name)) throw new EmptySessionNameError();
  const session = await SessionFile.open(file, { digest: true });
  assertPiCanOpen(session, "name", options.surface);
  const expectation = expectationOf(session);
  assertAccess(await accessOfSession(session, options), ACTIONS.name, options);
  const entry = buildSessionInfoEntry({
    id: newEntryId(session.byId),
    parentId: session.leafId,
    timestamp: now().toISOString(),
    name,
  });
  const bytesAfter = appendEntries(expectation, [entry]);
  return { file, entry, bytesBefore: expectation.size, bytesAfter };
}
