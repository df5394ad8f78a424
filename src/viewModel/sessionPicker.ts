/** The rows of "Select Session…" and `pi-context sessions`: the same labels and order on both. */

import * as path from "node:path";
import type { SessionAccess } from "../core/access/access";
import { resumeOrder, sessionModifiedMs, type ListingScope, type SessionInfo } from "../core/read/sessionInfo";
import { isNamed, sessionLabel } from "../core/rules/sessionLabel";
import { formatDateTime, pluralText } from "../shared/format";
import * as l10n from "@vscode/l10n";

/** One QuickPick row. */
export interface SessionPickRow {
  file: string;
  label: string;
  description: string;
  /** Plain session text, never icon or markup syntax; {@link pickRowDetail} renders it per surface. */
  detail: SessionPickDetail;
  current: boolean;
  depth: number;
  live?: LiveMark;
}

/** Who has a session open, as a row says it: a pi with its live bridge, a pi without it, or only a recent write. */
export type LiveMark =
  | { kind: "bridge"; pid: number; piVersion?: string }
  | { kind: "process"; pid: number }
  | { kind: "recent-write"; ageSeconds: number };

/** A row's mark from the access model's answer (its strongest evidence); undefined when nobody has it open. */
export function liveMarkOf(access: Pick<SessionAccess, "evidence"> | undefined): LiveMark | undefined {
  const e = access?.evidence[0];
  if (!e) return undefined;
  if (e.kind === "bridge") return { kind: "bridge", pid: e.pid, ...(e.piVersion ? { piVersion: e.piVersion } : {}) };
  if (e.kind === "process") return { kind: "process", pid: e.pid };
  return { kind: "recent-write", ageSeconds: Math.round(e.ageSeconds) };
}

/** A row's live mark in words: "live in pi 1.6.0 (pid 4242, live bridge)", "live in pi (pid 4242, no live bridge)", "written 12 s ago". */
export function liveMarkText(mark: LiveMark): string {
  if (mark.kind === "bridge")
    return mark.piVersion
      ? l10n.t("live in pi {0} (pid {1}, live bridge)", mark.piVersion, mark.pid)
      : l10n.t("live in pi (pid {0}, live bridge)", mark.pid);
  if (mark.kind === "process") return l10n.t("live in pi (pid {0}, no live bridge)", mark.pid);
  return l10n.t("written {0} s ago", mark.ageSeconds);
}

/** The parts of a {@link SessionPickRow}'s detail line (see there). */
export interface SessionPickDetail {
  folder?: string;
  rest: string;
}

/** The detail's surface for plain text (the CLI): session text as it is, no folder icon. */
export const PLAIN_DETAIL = { text: (s: string): string => s, folderIcon: "" } as const;

/** `text` renders session text (VS Code: `iconLabelText`), `folderIcon` precedes the folder name. */
export function pickRowDetail(
  row: Pick<SessionPickRow, "current" | "detail">,
  surface: { text: (s: string) => string; folderIcon: string },
): string {
  const { detail } = row;
  const parts: string[] = [];
  if (row.current) parts.push("current");
  if (detail.folder) parts.push(`${surface.folderIcon}${surface.text(detail.folder)}`);
  if (detail.rest) parts.push(surface.text(detail.rest));
  return parts.join(" · ");
}

export function formatAge(thenMs: number, nowMs: number, locale?: string, dateText?: () => string): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 45) return l10n.t("just now");
  const min = Math.round(s / 60);
  if (min < 60) return l10n.t("{0} min ago", min);
  const h = Math.round(min / 60);
  if (h < 24) return l10n.t("{0} h ago", h);
  const d = Math.round(h / 24);
  if (d === 1) return "yesterday";
  if (d < 14) return l10n.t("{0} days ago", d);
  return dateText ? dateText() : formatDateTime(thenMs, locale);
}

/** 1024-based. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = bytes / 1024;
  if (kb < 10) return l10n.t("{0} KB", kb.toFixed(1));
  if (kb < 1024) return l10n.t("{0} KB", Math.round(kb));
  const mb = kb / 1024;
  return mb < 10 ? l10n.t("{0} MB", mb.toFixed(1)) : l10n.t("{0} MB", Math.round(mb));
}

/** Collapse whitespace and cut to `max` characters (with `…`). */
export function oneLine(text: string, max = 80): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** No folder open: the `cwd`; several: the folder's name; one: only a sub-folder. Undefined: nothing to add. */
export function projectFolderLabel(
  cwd: string | undefined,
  folders: readonly { name: string; path: string }[],
  home?: string,
): string | undefined {
  if (!cwd) return folders.length === 0 ? l10n.t("unknown project folder") : undefined;
  const abs = path.resolve(cwd);
  const tilde = (p: string) => (home && (p === home || p.startsWith(home + path.sep)) ? `~${p.slice(home.length)}` : p);
  if (folders.length === 0) return tilde(abs);
  const owner = folders
    .filter((f) => abs === path.resolve(f.path) || abs.startsWith(path.resolve(f.path) + path.sep))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!owner) return tilde(abs);
  const sub = path.relative(path.resolve(owner.path), abs);
  if (folders.length === 1) return sub ? sub : undefined;
  return sub ? `${owner.name}/${sub}` : owner.name;
}

/** A session and its place in the family tree (pi's `/resume` threads: forks and clones under their parent). */
export interface FamilyRow {
  info: SessionInfo;
  depth: number;
}

const NO_CHILDREN: readonly SessionInfo[] = [];

function pathKey(p: string): string {
  if (process.platform !== "win32" && p.startsWith("/") && !/\/\.{0,2}(\/|$)/.test(p)) return p;
  return path.resolve(p);
}

/**
 * pi's threaded `/resume` list (`buildSessionTree` + `flattenSessionTree`): forks under their parent,
 * ordered by the latest activity in each subtree, stable. Cycle-safe (pi's own walk is not).
 */
export function familyRows(unordered: readonly SessionInfo[], scope: ListingScope = "folder"): FamilyRow[] {
  const infos = resumeOrder(unordered, scope);
  const modified = new Map<SessionInfo, number>();
  for (const info of infos) modified.set(info, sessionModifiedMs(info));
  const timeOf = (info: SessionInfo): number => modified.get(info)!;
  // nodes keyed by the info objects themselves: no string hashing per comparison
  const plain = !infos.some((i) => pathKey(i.file) !== i.file);
  const byPath = new Map<string, SessionInfo>();
  const nodes: SessionInfo[] = [];
  for (const i of infos) {
    const k = plain ? i.file : pathKey(i.file);
    if (byPath.has(k)) continue;
    byPath.set(k, i);
    nodes.push(i);
  }
  const children = new Map<SessionInfo, SessionInfo[]>();
  const roots: SessionInfo[] = [];
  for (const info of nodes) {
    const parent = info.parentSession ? byPath.get(pathKey(info.parentSession)) : undefined;
    if (parent && parent !== info) {
      const list = children.get(parent);
      if (list) list.push(info);
      else children.set(parent, [info]);
    } else roots.push(info);
  }
  // without recursion (deep fork chains), cycle-safe
  const latest = new Map<SessionInfo, number>();
  const latestOf = (start: SessionInfo): number => {
    if (!children.has(start)) return timeOf(start); // most sessions: no forks, nothing to walk
    const known = latest.get(start);
    if (known !== undefined) return known;
    const onPath = new Set<SessionInfo>([start]);
    const stack: { info: SessionInfo; next: number; t: number }[] = [{ info: start, next: 0, t: timeOf(start) }];
    let result = timeOf(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const kids = children.get(top.info) ?? NO_CHILDREN;
      if (top.next < kids.length) {
        const c = kids[top.next++]!;
        const done = latest.get(c);
        if (done !== undefined) top.t = Math.max(top.t, done);
        else if (!onPath.has(c)) {
          onPath.add(c);
          stack.push({ info: c, next: 0, t: timeOf(c) });
        }
        continue;
      }
      stack.pop();
      onPath.delete(top.info);
      latest.set(top.info, top.t);
      result = top.t;
      const parent = stack[stack.length - 1];
      if (parent) parent.t = Math.max(parent.t, top.t);
    }
    return result;
  };
  const order = (list: readonly SessionInfo[]): readonly SessionInfo[] => {
    if (list.length < 2) return list;
    // pi's comparison, stable: equal times keep the listing order
    const timed = list.map((info) => ({ info, t: latestOf(info) }));
    timed.sort((a, b) => b.t - a.t);
    return timed.map((x) => x.info);
  };
  const out: FamilyRow[] = [];
  const placed = new Set<SessionInfo>();
  const walk = (root: SessionInfo): void => {
    if (placed.has(root)) return;
    if (!children.has(root)) {
      placed.add(root);
      out.push({ info: root, depth: 0 });
      return;
    }
    const stack: FamilyRow[] = [{ info: root, depth: 0 }];
    while (stack.length > 0) {
      const row = stack.pop()!;
      if (placed.has(row.info)) continue;
      placed.add(row.info);
      out.push(row);
      const kids = order(children.get(row.info) ?? NO_CHILDREN);
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ info: kids[i]!, depth: row.depth + 1 });
    }
  };
  for (const r of order(roots)) walk(r);
  // members of a parent cycle have no root: list them as roots
  if (placed.size < nodes.length) for (const info of nodes) walk(info);
  return out;
}

/** Rows of the first render while the listing is read: more than a tall window shows. */
export const PICKER_FIRST_ROWS = 50;

/** Rows in pi's `/resume` order; `limit`: only the first rows (the texts are most of the cost). */
export function sessionPickRows(
  sessions: readonly SessionInfo[],
  options: {
    currentFile?: string;
    nowMs: number;
    locale?: string;
    folderName?: (s: SessionInfo) => string | undefined;
    limit?: number;
    scope?: ListingScope;
    live?: ReadonlyMap<string, Pick<SessionAccess, "evidence">>;
  },
): SessionPickRow[] {
  const family = familyRows(sessions, options.scope);
  if (options.limit !== undefined && family.length > options.limit) family.length = options.limit;
  return family.map(({ info: s, depth }) => {
    const current = s.file === options.currentFile;
    const folder = options.folderName?.(s);
    // reused while the info object is unchanged (the picker re-renders as the listing fills in)
    let texts = rowTexts.get(s);
    if (!texts || texts.folder !== folder || texts.locale !== options.locale) {
      texts = { folder, locale: options.locale, ...buildRowTexts(s, folder, options.locale) };
      rowTexts.set(s, texts);
    }
    const t = texts;
    const modified = sessionModifiedMs(s);
    const age = Number.isNaN(modified)
      ? l10n.t("unknown time")
      : formatAge(modified, options.nowMs, options.locale, () => (t.modified ??= formatDateTime(modified, t.locale)));
    const live = liveMarkOf(options.live?.get(s.file));
    const description = `${live ? `${liveMarkText(live)} · ` : ""}${age} · ${texts.sizeAndCount}`;
    const indent = depth > 0 ? `${"\u2003".repeat(depth - 1)}↳ ` : "";
    return {
      file: s.file,
      label: `${indent}${texts.label}`,
      description,
      detail: texts.detail,
      current,
      depth,
      ...(live ? { live } : {}),
    };
  });
}

const rowTexts = new WeakMap<
  SessionInfo,
  {
    folder: string | undefined;
    locale: string | undefined;
    label: string;
    sizeAndCount: string;
    detail: SessionPickDetail;
    modified?: string;
  }
>();

function buildRowTexts(
  s: SessionInfo,
  folder: string | undefined,
  locale: string | undefined,
): { label: string; sizeAndCount: string; detail: SessionPickDetail } {
  const messages = s.complete
    ? pluralText(s.messageCount, l10n.t("{0} message"), l10n.t("{0} messages"))
    : l10n.t("counting…");
  const created = s.created ? Date.parse(s.created) : NaN;
  const rest = [
    isNamed(s) && s.firstMessage ? oneLine(s.firstMessage, 60) : undefined,
    s.models.length > 0 ? s.models.join(", ") : undefined,
    Number.isFinite(created) ? `started ${formatDateTime(created, locale)}` : undefined,
    path.basename(s.file),
  ]
    .filter(Boolean)
    .join(" · ");
  const detail: SessionPickDetail = { ...(folder ? { folder } : {}), rest };
  return { label: sessionLabel(s), sizeAndCount: `${formatBytes(s.size)} · ${messages}`, detail };
}

export function followRow(
  following: boolean,
  hasFolder: boolean,
): { label: string; description?: string; detail: string } {
  if (!hasFolder) {
    return following
      ? {
          label: l10n.t("$(info) No folder open: no session to follow"),
          detail: l10n.t(
            "Pick a session below to show it (each shows its project folder), or open the folder pi ran in.",
          ),
        }
      : {
          label: l10n.t("$(arrow-up) Follow Latest Session"),
          detail: l10n.t("Unpin this session (with no folder open, none is followed)"),
        };
  }
  return following
    ? {
        label: l10n.t("$(check) Following the Latest Session"),
        description: l10n.t("current mode"),
        detail: l10n.t(
          "Shows the most recently written session of this workspace and switches when pi starts a new one. Pick a session below to pin it.",
        ),
      }
    : {
        label: l10n.t("$(arrow-up) Follow Latest Session"),
        detail: l10n.t("Unpin and show the most recently written session of this workspace again"),
      };
}

/** Why the pin ended: the pinned session `label` was deleted (`reason` undefined) or cannot be read. */
export function pinLostMessage(label: string, reason: string | undefined): string {
  return reason === undefined
    ? l10n.t("The pinned session {0} was deleted; following the latest session again.", label)
    : l10n.t("The pinned session {0} cannot be read ({1}); following the latest session again.", label, reason);
}
