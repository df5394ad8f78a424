/**
 * Naming a session in the file, as pi's `/name` does: `SessionManager.appendSessionInfo(name)`
 * (pi 1.6.0 `core/session-manager.js`) appends `{type:"session_info", id, parentId: <leaf>,
 * timestamp, name}` with the name's line breaks turned into one space and trimmed; pi's
 * `getSessionName()` and its `/resume` list then show it. Written through the one write path
 * (`appendEntries`, after the change check) and behind the live-session guard: a running pi would
 * not see the entry (it names its own session with `/name`, or through the live bridge).
 */

import { SessionFile } from "../read/session";
import { normalizeSessionName } from "../rules/sessionLabel";
import type { SessionInfoEntry } from "../types";
import { ACTIONS } from "../access/route";
import { accessOfSession, assertAccess, type MessageSurface, type SessionAccessOptions } from "../access/words";
import { appendEntries, expectationOf, newEntryId } from "./write";
import { assertPiCanOpen } from "./preflight";

/** What {@link appendSessionName} wrote. */
export interface NameResult {
  file: string;
  entry: SessionInfoEntry;
  bytesBefore: number;
  bytesAfter: number;
}

/** Thrown for a name pi refuses (`Session name cannot be empty`). */
export class EmptySessionNameError extends Error {
  constructor() {
    super("Session name cannot be empty");
    this.name = "EmptySessionNameError";
  }
}

/** pi's `session_info` entry, keys in pi's order. */
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
 * Append pi's `session_info` entry naming the session.
 * @throws {EmptySessionNameError} for a name that is empty after pi's normalisation (nothing written).
 * @throws {LiveSessionError} when the session looks live (nothing written).
 * @throws {SessionChangedError} when the file changed while it was read (nothing written).
 * @throws {UnsafeSessionWriteError} for files we never write.
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
