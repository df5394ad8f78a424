/**
 * The rows of "Pi: Select Session…", without `vscode`: title (session name or first user message),
 * time, size, entry count (`≈` when estimated from the head of a large file), current marker.
 */

import * as path from "node:path";
import type { SessionSummary } from "./core/locate";

/** One QuickPick row. */
export interface SessionPickRow {
  file: string;
  label: string;
  description: string;
  detail: string;
  current: boolean;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date (YYYY-MM-DD). */
export function formatAge(thenMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 45) return "just now";
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d === 1) return "yesterday";
  if (d < 14) return `${d} days ago`;
  return new Date(thenMs).toISOString().slice(0, 10);
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
 * Rows for the sessions (keep their order: newest first). `folderName` names the workspace folder
 * of a session (shown with several folders).
 */
export function sessionPickRows(
  sessions: readonly SessionSummary[],
  options: { currentFile?: string; currentEntryCount?: number; nowMs: number; folderName?: (s: SessionSummary) => string | undefined },
): SessionPickRow[] {
  return sessions.map((s) => {
    const current = s.file === options.currentFile;
    const title = s.name ? oneLine(s.name) : s.firstMessage ? oneLine(s.firstMessage) : "(no user message yet)";
    // Exact counts only: small files are counted, the current session is loaded; others show their size.
    const count = current && options.currentEntryCount !== undefined ? options.currentEntryCount : s.entryCount;
    const entries = count === undefined ? undefined : `${count.toLocaleString("en-US")} ${count === 1 ? "entry" : "entries"}`;
    const description = [formatAge(s.mtimeMs, options.nowMs), formatBytes(s.size), entries].filter(Boolean).join(" · ");
    const folder = options.folderName?.(s);
    const detail = [current ? "current" : undefined, s.name && s.firstMessage ? oneLine(s.firstMessage, 60) : undefined, folder, path.basename(s.file)].filter(Boolean).join(" · ");
    return { file: s.file, label: title, description, detail, current };
  });
}
