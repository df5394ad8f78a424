/**
 * References that point nowhere or somewhere odd: missing parents (and the separate trees they
 * make), parent cycles, duplicate ids, `context_edit` targets, the latest compaction's
 * `firstKeptEntryId`, branch summaries' `fromId`. Built on the structural diagnostics of
 * `rules/tree.ts` and the reading diagnostics (`read/diagnostics.ts`), adding what pi does with
 * each.
 *
 * pi 1.6.0 behaviour cited (`dist/core/session-manager.js`): `getBranch` / `buildSessionPath` walk
 * `parentId` through `byId` with no visited set (a cycle on the leaf's path never ends);
 * `_buildIndex` keeps the last entry per id; `getTree` makes one node per id (the last entry) and
 * attaches it once per entry line, orphans and self-parents as roots, then walks the nodes with a
 * stack and no visited set; `buildSessionProjection` applies the latest `context_edit` per target
 * among the context entries (`projectContextEntry`); `buildContextEntries` keeps the path from
 * `firstKeptEntryId` (nothing when it is not on the path before the compaction).
 */

import type { Projection } from "../rules/context";
import { editableRole } from "../rules/contextEdit";
import type { EntryRecord } from "../read/entries";
import { PI_CONTEXT_CUSTOM_TYPE } from "../read/entries";
import type { Diagnostic } from "../types";
import { entryRef, type HealthFinding } from "./types";
import * as l10n from "@vscode/l10n";

/** What the reference checks read. */
export interface ReferenceInput {
  records: readonly EntryRecord[];
  byId: ReadonlyMap<string, EntryRecord>;
  projection: Projection;
  /** Reading and structural diagnostics (`SessionFile.diagnostics` + `structureDiagnostics`). */
  diagnostics: readonly Diagnostic[];
}

const NO_REWRITE = "pi-context never rewrites the file";

/** All reference findings (see the file comment). */
export function referenceFindings(input: ReferenceInput): HealthFinding[] {
  return [
    ...structureFindings(input),
    ...duplicateIdFindings(input),
    ...editFindings(input),
    ...firstKeptFindings(input),
    ...fromIdFindings(input),
  ];
}

function session(
  f: Omit<HealthFinding, "source" | "repair" | "relatedIds"> & Partial<HealthFinding>,
  line?: number,
): HealthFinding {
  return {
    relatedIds: [],
    repair: null,
    source: "session",
    ...f,
    ...(line !== undefined && line > 0 ? { line } : {}),
  };
}

/** Missing parents, cycles, several roots, concurrent writers. */
function structureFindings(input: ReferenceInput): HealthFinding[] {
  const { byId, projection, diagnostics } = input;
  const out: HealthFinding[] = [];
  const ref = (id: string | undefined) => entryRef(id === undefined ? undefined : byId.get(id), id);
  const skipped = diagnostics.some((d) => SKIPPED_CODES.has(d.code));
  let descendants: Map<string, number> | undefined;
  const cycleAt = projection.pathInfo.cycleAt;
  for (const d of diagnostics) {
    if (d.code === "missing-parent" && d.entryId !== undefined) {
      descendants ??= descendantCounts(input.records, byId);
      const record = byId.get(d.entryId);
      const onPath = projection.path[0]?.id === d.entryId && projection.pathInfo.missingParent !== undefined;
      const n = descendants.get(d.entryId) ?? 0;
      out.push(
        session(
          {
            code: "missing-parent",
            severity: onPath ? "warning" : "info",
            entryId: d.entryId,
            message: l10n.t(
              "{0} names parent {1}, which is not in the file{2}: {3} a separate tree, shown as its own root here and in pi's /tree. {4} Only the missing lines (from a backup) can reconnect it; {5}.",
              ref(d.entryId),
              record?.parentId ?? "?",
              skipped ? l10n.t(" (a skipped line may have held it)") : "",
              n === 0 ? l10n.t("it forms") : l10n.t("it and its {0} later {1} form", n, n === 1 ? "entry" : "entries"),
              onPath
                ? l10n.t("The current branch starts there: pi sends nothing from before it.")
                : l10n.t("The current branch is not affected."),
              NO_REWRITE,
            ),
          },
          d.line,
        ),
      );
    } else if (d.code === "parent-cycle") {
      const members = [d.entryId, ...(d.relatedIds ?? [])].filter((id): id is string => id !== undefined);
      if (cycleAt !== undefined && members.includes(cycleAt)) continue; // reported as path-cycle
      out.push(
        session(
          {
            code: "parent-cycle",
            severity: "warning",
            entryId: d.entryId ?? null,
            relatedIds: d.relatedIds ?? [],
            message: l10n.t(
              "Entries {0} are each other's parents (a parent cycle): they hang off no root, so pi's /tree and the Pi Session tree do not show them; the current branch does not run through them, so pi is not affected. Only editing their parentId fixes it; {1}.",
              [...members, members[0]].join(" → "),
              NO_REWRITE,
            ),
          },
          d.line,
        ),
      );
    } else if (d.code === "concurrent-writers") {
      out.push(
        session(
          {
            code: "concurrent-writers",
            severity: "warning",
            entryId: d.entryId ?? null,
            message: l10n.t(
              "{0} pi has no file lock: each process appends to its own branch, and whichever wrote last decides where the session resumes. Run one pi per session; use Switch to Here to continue on the other branch.",
              d.message,
            ),
          },
          d.line,
        ),
      );
    } else if (d.code === "several-roots") {
      out.push(session({ code: "several-roots", severity: "info", entryId: null, message: `${d.message}.` }));
    }
  }
  if (cycleAt !== undefined) out.push(pathCycleFinding(input, cycleAt));
  return out;
}

/** Reading diagnostics of lines pi skips too (it keeps a line without a string id, or without a message). */
export const SKIPPED_CODES = new Set(["malformed-line", "invalid-escape", "line-too-long", "not-an-entry"]);

/** Per entry (owner of its id): how many entries descend from it. Iterative, cycle-safe. */
function descendantCounts(
  records: readonly EntryRecord[],
  byId: ReadonlyMap<string, EntryRecord>,
): Map<string, number> {
  const kids = new Map<string, string[]>();
  for (const r of records) {
    if (byId.get(r.id) !== r || !r.parentId || r.parentId === r.id || !byId.has(r.parentId)) continue;
    let list = kids.get(r.parentId);
    if (!list) kids.set(r.parentId, (list = []));
    list.push(r.id);
  }
  const counts = new Map<string, number>();
  for (const r of records) {
    if (byId.get(r.id) !== r || (r.parentId && r.parentId !== r.id && byId.has(r.parentId))) continue;
    // a root (or orphan root): count its subtree
    let n = 0;
    const stack = [...(kids.get(r.id) ?? [])];
    const seen = new Set<string>([r.id]);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      n++;
      stack.push(...(kids.get(id) ?? []));
    }
    counts.set(r.id, n);
  }
  return counts;
}

/** The leaf's path runs into a parent cycle: pi hangs opening the session; a leaf marker moves it off. */
function pathCycleFinding(input: ReferenceInput, cycleAt: string): HealthFinding {
  const { byId } = input;
  const target = newestCleanEntry(input.records, byId);
  const leaf = input.projection.path[input.projection.path.length - 1];
  return session(
    {
      code: "path-cycle",
      severity: "error",
      entryId: leaf?.id ?? cycleAt,
      relatedIds: leaf && leaf.id !== cycleAt ? [cycleAt] : [],
      message: l10n.t(
        "The current branch runs into a parent cycle at {0}: pi 1.6.0 follows parentId from the leaf without end when it opens the session (getBranch), so it hangs and runs out of memory. {1}",
        entryRef(byId.get(cycleAt), cycleAt),
        target
          ? l10n.t(
              "Fix: move pi's leaf to {0}, the newest entry whose branch has no cycle (a leaf marker; the looping entries stay in the file).",
              entryRef(target),
            )
          : l10n.t(
              "No entry of the file has a branch without the cycle; only editing the file fixes it; {0}.",
              NO_REWRITE,
            ),
      ),
      ...(target
        ? {
            repair: {
              kind: "leaf-marker" as const,
              targetId: target.id,
              description: l10n.t(
                "append a pi-context/leaf marker on {0}: pi resumes there instead of looping",
                entryRef(target),
              ),
            },
          }
        : {}),
    },
    leaf?.line,
  );
}

/** The newest entry (file order) owning its id whose parent chain ends at a root or a missing parent. */
function newestCleanEntry(
  records: readonly EntryRecord[],
  byId: ReadonlyMap<string, EntryRecord>,
): EntryRecord | undefined {
  const clean = new Map<string, boolean>();
  const isClean = (start: EntryRecord): boolean => {
    const walk: string[] = [];
    const onWalk = new Set<string>();
    let current: EntryRecord | undefined = start;
    let verdict = true;
    while (current) {
      const known = clean.get(current.id);
      if (known !== undefined) {
        verdict = known;
        break;
      }
      if (onWalk.has(current.id)) {
        verdict = false;
        break;
      }
      onWalk.add(current.id);
      walk.push(current.id);
      current = current.parentId ? byId.get(current.parentId) : undefined;
    }
    for (const id of walk) clean.set(id, verdict);
    return verdict;
  };
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (byId.get(r.id) !== r) continue;
    if (r.type === "custom" && r.customType === PI_CONTEXT_CUSTOM_TYPE) continue;
    if (isClean(r)) return r;
  }
  return undefined;
}

/** Duplicate ids (reading diagnostics) and whether pi's /tree loops on them. */
function duplicateIdFindings(input: ReferenceInput): HealthFinding[] {
  const dups = input.diagnostics.filter((d) => d.code === "duplicate-id" && d.entryId !== undefined);
  if (dups.length === 0) return [];
  const out: HealthFinding[] = dups.map((d) =>
    session(
      {
        code: "duplicate-id",
        severity: "warning",
        entryId: d.entryId!,
        message: l10n.t(
          "{0}. pi keeps the later entry: its children, edits and labels all mean it, and the earlier one drops out of every branch pi builds. Only editing the file (a new id for one of them) separates them; {1}.",
          d.message,
          NO_REWRITE,
        ),
      },
      d.line,
    ),
  );
  const loop = treeLoop(input.records);
  if (loop)
    out.push(
      session({
        code: "tree-hang",
        severity: "error",
        entryId: loop[0]!,
        relatedIds: loop.slice(1),
        message:
          input.projection.pathInfo.cycleAt === undefined
            ? l10n.t(
                "Because of duplicate ids, entries {0} are each other's ancestors in pi's tree: pi 1.6.0's /tree (getTree) walks them forever and hangs. Opening and prompting still work; only editing the file (a new id for one of the duplicates) fixes /tree; {1}.",
                loop.join(" → "),
                NO_REWRITE,
              )
            : l10n.t(
                "Because of duplicate ids, entries {0} are each other's ancestors in pi's tree: pi 1.6.0's /tree (getTree) walks them forever and hangs. The current branch runs into that cycle too, so opening the session hangs as well (see path-cycle: a leaf marker fixes opening and prompting); only editing the file (a new id for one of the duplicates) fixes /tree; {1}.",
                loop.join(" → "),
                NO_REWRITE,
              ),
      }),
    );
  return out;
}

/**
 * pi's `getTree` on the file: one node per id (the last entry), attached under the node of each
 * entry line's `parentId` (missing or self parent: a root). Returns the ids of a cycle reachable
 * from a root (the stack walk would never end), or undefined.
 */
export function treeLoop(records: readonly EntryRecord[]): string[] | undefined {
  const children = new Map<string, Set<string>>();
  const ids = new Set(records.map((r) => r.id));
  const roots: string[] = [];
  for (const r of records) {
    if (r.parentId === null || r.parentId === r.id || !ids.has(r.parentId)) roots.push(r.id);
    else {
      let set = children.get(r.parentId);
      if (!set) children.set(r.parentId, (set = new Set()));
      set.add(r.id);
    }
  }
  // iterative DFS with colours: 1 = on the stack, 2 = done
  const colour = new Map<string, 1 | 2>();
  for (const root of roots) {
    if (colour.has(root)) continue;
    const stack: { id: string; next: Iterator<string> }[] = [];
    const enter = (id: string) => {
      colour.set(id, 1);
      stack.push({ id, next: (children.get(id) ?? new Set<string>()).values() });
    };
    enter(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const step = top.next.next();
      if (step.done) {
        colour.set(top.id, 2);
        stack.pop();
        continue;
      }
      const child = step.value;
      const c = colour.get(child);
      if (c === 1) {
        const from = stack.findIndex((s) => s.id === child);
        return stack.slice(from).map((s) => s.id);
      }
      if (c === undefined) enter(child);
    }
  }
  return undefined;
}

/** `context_edit` entries of the context whose target is missing, elsewhere, or not editable; invalid replacements. */
function editFindings(input: ReferenceInput): HealthFinding[] {
  const { byId, projection } = input;
  const out: HealthFinding[] = [];
  const inContext = new Map(projection.entries.map((e) => [e.record.id, e]));
  const onPath = new Set(projection.path.map((r) => r.id));
  for (const e of projection.entries) {
    const edit = e.record;
    if (edit.type !== "context_edit") continue;
    const t = edit.targetId;
    const target = t === undefined ? undefined : byId.get(t);
    const editRef = entryRef(edit);
    if (!target) {
      out.push(
        session(
          {
            code: "edit-target-missing",
            severity: "info",
            entryId: edit.id,
            message: l10n.t(
              '{0} targets {1}: it changes nothing (pi\'s own appendContextEdit refuses such an edit: "Entry {2} not found").',
              editRef,
              t === undefined
                ? l10n.t("no entry (its targetId is not a string)")
                : l10n.t("{0}, which is not in the file", t),
              t ?? "?",
            ),
          },
          edit.line,
        ),
      );
      continue;
    }
    const projected = inContext.get(target.id);
    if (!projected) {
      if (!onPath.has(target.id))
        out.push(
          session(
            {
              code: "edit-target-off-path",
              severity: "info",
              entryId: edit.id,
              relatedIds: [target.id],
              message: l10n.t(
                '{0} targets {1}, which is not on the current branch: it changes nothing here (pi\'s own appendContextEdit refuses such an edit: "Entry {2} is not on the active branch").',
                editRef,
                entryRef(target),
                target.id,
              ),
            },
            edit.line,
          ),
        );
      continue;
    }
    if (projected.edit !== edit) continue; // a later edit of the same target wins
    const role = editableRole(target);
    if (!role) {
      out.push(
        session(
          {
            code: "edit-target-not-editable",
            severity: edit.replacementIsNull ? "warning" : "info",
            entryId: edit.id,
            relatedIds: [target.id],
            message: edit.replacementIsNull
              ? l10n.t(
                  '{0} omits {1}, which pi\'s own appendContextEdit refuses to edit ("does not contribute editable model content"); pi applies it anyway, so the model does not see that {2}. If that was not intended, only editing the file brings it back; {3}.',
                  editRef,
                  entryRef(target),
                  target.type === "message"
                    ? l10n.t("{0} message", String(target.role))
                    : target.type.replace(/_/g, " "),
                  NO_REWRITE,
                )
              : l10n.t(
                  "{0} replaces {1}, which is not editable: pi leaves such a message unchanged, so the edit changes nothing.",
                  editRef,
                  entryRef(target),
                ),
          },
          edit.line,
        ),
      );
      continue;
    }
    if (edit.replacementInvalid) {
      out.push(
        session(
          {
            code: "edit-invalid-replacement",
            severity: "error",
            entryId: edit.id,
            relatedIds: [target.id],
            message: l10n.t(
              "{0} gives {1} a replacement that is neither null nor {content: string or array}: pi 1.6.0 cannot build a valid message from it (it throws, or the message has no content to estimate or send). Fix: restore the entry's own content (a newer context edit; the latest edit of an entry wins).",
              editRef,
              entryRef(target),
            ),
            repair: {
              kind: "context-edit",
              action: { action: "restore", targetId: target.id },
              description: l10n.t(
                "append a context_edit that restores the original content of {0} (it supersedes {1})",
                entryRef(target),
                edit.id,
              ),
            },
          },
          edit.line,
        ),
      );
    }
  }
  return out;
}

/** The latest compaction on the path: `firstKeptEntryId` not before it on the path, or on a tool result. */
function firstKeptFindings(input: ReferenceInput): HealthFinding[] {
  const { byId, projection } = input;
  const compaction = projection.compaction;
  if (!compaction) return [];
  const at = projection.path.indexOf(compaction);
  const fk = compaction.firstKeptEntryId;
  const kept = fk === undefined ? -1 : projection.path.findIndex((r, i) => i < at && r.id === fk);
  const ref = entryRef(compaction);
  if (kept < 0) {
    const target = fk === undefined ? undefined : byId.get(fk);
    const where =
      fk === undefined
        ? l10n.t("no entry (firstKeptEntryId is missing)")
        : !target
          ? l10n.t("{0}, which is not in the file", fk)
          : projection.path.includes(target)
            ? l10n.t("{0}, which comes after it", entryRef(target))
            : l10n.t("{0}, which is not on the current branch", entryRef(target));
    return [
      session(
        {
          code: "first-kept-missing",
          severity: "warning",
          entryId: compaction.id,
          relatedIds: target ? [target.id] : [],
          message: l10n.t(
            "The latest compaction {0} keeps from {1}: pi finds nothing to keep, so the model sees only the summary and what came after it. pi never writes this itself; a new compaction (or Switch to Here before it) gives a normal kept range.",
            ref,
            where,
          ),
        },
        compaction.line,
      ),
    ];
  }
  const first = projection.path[kept]!;
  if (first.type === "message" && first.role === "toolResult")
    return [
      session(
        {
          code: "first-kept-tool-result",
          severity: "warning",
          entryId: compaction.id,
          relatedIds: [first.id],
          message: l10n.t(
            "The latest compaction {0} keeps from {1}, a tool result: pi never cuts there, because the result's call is summarized away and the kept result goes out without it (see the tool-result finding; omitting that result repairs the request).",
            ref,
            entryRef(first),
          ),
        },
        compaction.line,
      ),
    ];
  return [];
}

/** Branch summaries whose `fromId` names no entry (and is not pi's "root"). */
function fromIdFindings(input: ReferenceInput): HealthFinding[] {
  const out: HealthFinding[] = [];
  for (const r of input.records) {
    if (r.type !== "branch_summary" || input.byId.get(r.id) !== r) continue;
    if (r.fromId === "root" || (r.fromId !== undefined && input.byId.has(r.fromId))) continue;
    out.push(
      session(
        {
          code: "branch-summary-from-missing",
          severity: "info",
          entryId: r.id,
          message: l10n.t(
            "{0} says it summarizes the branch that ended at {1}. pi keeps fromId only as a record (it is not sent to the model and does not place the summary: parentId does), so nothing breaks.",
            entryRef(r),
            r.fromId === undefined ? l10n.t("(no fromId)") : l10n.t("{0}, which is not in the file", r.fromId),
          ),
        },
        r.line,
      ),
    );
  }
  return out;
}
