/**
 * Tracked files at the leaf as pi 1.6.0's next compaction computes them (`extractFileOperations` +
 * `computeFileLists`): seeded from the latest compaction's `details` unless `fromHook`.
 */

import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { Projection } from "../core/rules/context";
import { addDetails, addFileOps, computeFileLists, createFileOps } from "../core/rules/files";
import { contribution, type BodyReader } from "../core/rules/tokens";
import type { FileSource, TrackedFileModel, TrackedFilesModel } from "../shared/protocol";

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/** pi's `resolveToCwd`: unicode spaces, one leading `@`, `~`, `file://`, then `path.resolve`. */
export function resolveToolPath(filePath: string, cwd: string | undefined, home: string = os.homedir()): string {
  let p = filePath.replace(UNICODE_SPACES, " ");
  if (p.startsWith("@")) p = p.slice(1);
  if (p === "~") p = home;
  else if (p.startsWith("~/")) p = path.join(home, p.slice(2));
  if (/^file:\/\//.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch {
      // keep as is
    }
  }
  return path.isAbsolute(p) ? path.resolve(p) : path.resolve(cwd ?? "/", p);
}

/** Options for {@link buildTrackedFiles}. */
export interface TrackedFilesOptions {
  cwd?: string;
  home?: string;
  /** Keep only each file's last this many sources (default: all). */
  maxSources?: number;
}

export function buildTrackedFiles(
  projection: Projection,
  reader: BodyReader,
  cwd: string | undefined,
  options: TrackedFilesOptions = {},
): TrackedFilesModel {
  const base = options.cwd ?? cwd;
  const ops = createFileOps();
  const sources = new Map<string, FileSource[]>();
  const addSource = (p: string, s: FileSource) => {
    const list = sources.get(p);
    if (list) list.push(s);
    else sources.set(p, [s]);
  };

  const turnOrdinal = new Map<string, number>();
  const compactionOrdinal = new Map<string, number>();
  let turns = 0;
  let compactions = 0;
  let lastAssistant: { id: string; ordinal: number } | null = null;
  const ownerTurn = new Map<string, { id: string; ordinal: number }>();
  for (const r of projection.path) {
    if (r.type === "message" && r.role === "assistant") {
      turns++;
      turnOrdinal.set(r.id, turns);
      lastAssistant = { id: r.id, ordinal: turns };
    } else if (r.type === "compaction") compactionOrdinal.set(r.id, ++compactions);
    if (lastAssistant) ownerTurn.set(r.id, lastAssistant);
  }

  let seededFrom: string | null = null;
  const compaction = projection.compaction;
  if (compaction && !compaction.fromHook && compaction.details) {
    seededFrom = compaction.id;
    addDetails(ops, compaction);
    const ordinal = compactionOrdinal.get(compaction.id) ?? 0;
    for (const f of compaction.details.readFiles ?? [])
      addSource(f, {
        kind: "compaction",
        entryId: compaction.id,
        timestamp: compaction.timestamp,
        ordinal,
        op: "read",
      });
    for (const f of compaction.details.modifiedFiles ?? [])
      addSource(f, {
        kind: "compaction",
        entryId: compaction.id,
        timestamp: compaction.timestamp,
        ordinal,
        op: "modified",
      });
  }

  for (const entry of projection.entries) {
    if (entry.record.type === "compaction" || entry.roles.length === 0) continue;
    const fileOps = contribution(entry, reader).fileOps;
    if (fileOps.length === 0) continue;
    addFileOps(ops, fileOps);
    // a tool result's nested calls belong to the turn of the assistant before it
    const owner = turnOrdinal.has(entry.record.id)
      ? { id: entry.record.id, ordinal: turnOrdinal.get(entry.record.id)! }
      : ownerTurn.get(entry.record.id);
    for (const op of fileOps) {
      addSource(op.path, {
        kind: "turn",
        entryId: owner?.id ?? entry.record.id,
        timestamp: entry.record.timestamp,
        ordinal: owner?.ordinal ?? 0,
        op: op.kind,
      });
    }
  }

  const lists = computeFileLists(ops);
  const max = options.maxSources ?? Infinity;
  const model = (p: string, list: "read" | "modified"): TrackedFileModel => {
    const all = sources.get(p) ?? [];
    return {
      path: p,
      absolutePath: resolveToolPath(p, base, options.home),
      list,
      sources: all.length > max ? all.slice(all.length - max) : all,
      sourceCount: all.length,
    };
  };
  return {
    readFiles: lists.readFiles.map((p) => model(p, "read")),
    modifiedFiles: lists.modifiedFiles.map((p) => model(p, "modified")),
    seededFrom,
    cwd: base ?? null,
  };
}
