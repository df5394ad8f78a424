/**
 * The rows of "Pi: Select Session…", without `vscode`: title (session name or first user message),
 * time, size, entry count (`≈` when estimated from the head of a large file), current marker.
 */

import * as path from "node:path";
import type { SessionSummary } from "../core/read/locate";
import { formatDateTime, plural } from "../shared/format";

/** One QuickPick row. */
export interface SessionPickRow {
  file: string;
  label: string;
  description: string;
  detail: string;
  current: boolean;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date and time as everywhere ({@link formatDateTime}). */
export function formatAge(thenMs: number, nowMs: number, locale?: string): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 45) return "just now";
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d === 1) return "yesterday";
  if (d < 14) return `${d} days ago`;
  return formatDateTime(thenMs, locale);
}

/** Bytes as `812 B`, `4.2 KB`, `13 MB` (1024-based). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = bytes / 1024;
  if (kb < 10) return `${kb.toFixed(1)} KB`;
  if (kb < 1024) return `${Math.round(kb)} KB`;
  const mb = kb / 1024;
  return mb < 10 ? `${mb.toFixed(1)} MB` : `${Math.round(mb)} MB`;
}

/** Collapse whitespace and cut to `max` characters (with `…`). */
export function oneLine(text: string, max = 80): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/**
 * What to show as a session's project folder in the picker: with no folder open the session's
 * `cwd` (home as `~`), with several folders the workspace folder's name (plus the sub-folder),
 * with one folder only a sub-folder the session was started in; undefined when nothing to add.
 * @param folders the open workspace folders (name, absolute path).
 */
export function projectFolderLabel(
  cwd: string | undefined,
  folders: readonly { name: string; path: string }[],
  home?: string,
): string | undefined {
  if (!cwd) return folders.length === 0 ? "unknown project folder" : undefined;
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

/**
 * Rows for the sessions (keep their order: newest first). `folderName` names the project folder
 * of a session when it helps ({@link projectFolderLabel}).
 */
export function sessionPickRows(
  sessions: readonly SessionSummary[],
  options: {
    currentFile?: string;
    currentEntryCount?: number;
    nowMs: number;
    locale?: string;
    folderName?: (s: SessionSummary) => string | undefined;
  },
): SessionPickRow[] {
  return sessions.map((s) => {
    const current = s.file === options.currentFile;
    const title = s.name ? oneLine(s.name) : s.firstMessage ? oneLine(s.firstMessage) : "(no user message yet)";
    // Exact counts only: small files are counted, the current session is loaded; others show their size.
    const count = current && options.currentEntryCount !== undefined ? options.currentEntryCount : s.entryCount;
    const entries = count === undefined ? undefined : plural(count, "entry", "entries");
    const description = [formatAge(s.mtimeMs, options.nowMs, options.locale), formatBytes(s.size), entries]
      .filter(Boolean)
      .join(" · ");
    const folder = options.folderName?.(s);
    const detail = [
      current ? "current" : undefined,
      folder ? `$(folder) ${folder}` : undefined,
      s.name && s.firstMessage ? oneLine(s.firstMessage, 60) : undefined,
      path.basename(s.file),
    ]
      .filter(Boolean)
      .join(" · ");
    return { file: s.file, label: title, description, detail, current };
  });
}

/**
 * The first row of the picker: the "follow the latest session" mode, worded for its state
 * (following now or pinned; with or without an open folder).
 */
export function followRow(
  following: boolean,
  hasFolder: boolean,
): { label: string; description?: string; detail: string } {
  if (!hasFolder) {
    return following
      ? {
          label: "$(info) No folder open: no session to follow",
          detail: "Pick a session below to show it (each shows its project folder), or open the folder pi ran in.",
        }
      : {
          label: "$(arrow-up) Follow Latest Session",
          detail: "Unpin this session (with no folder open, none is followed)",
        };
  }
  return following
    ? {
        label: "$(check) Following the Latest Session",
        description: "current mode",
        detail:
          "Shows the most recently written session of this workspace and switches when pi starts a new one. Pick a session below to pin it.",
      }
    : {
        label: "$(arrow-up) Follow Latest Session",
        detail: "Unpin and show the most recently written session of this workspace again",
      };
}
