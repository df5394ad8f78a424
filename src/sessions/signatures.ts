/** Cheap snapshots of pi's config files and the session folders, for the fallback poll. */

import * as fs from "node:fs";
import * as path from "node:path";
import { statFiles } from "../core/read/catalog";
import type { FolderPlan } from "./scan";

/** `size:mtime:ino` of a file, or `-`. */
async function statSig(file: string): Promise<string> {
  try {
    const s = await fs.promises.stat(file);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return "-";
  }
}

/** State of pi's settings/models/trust files and the projects' `.pi/settings.json`. */
export async function configSignature(agentDir: string, plans: readonly FolderPlan[]): Promise<string> {
  const parts: string[] = [];
  for (const name of ["settings.json", "models.json", "models-store.json", "trust.json"])
    parts.push(await statSig(path.join(agentDir, name)));
  for (const p of plans) if (p.index >= 0) parts.push(await statSig(path.join(p.folder, ".pi", "settings.json")));
  return parts.join("|");
}

/** The session's own `cwd` project settings, which need not be a workspace folder's. */
export async function sessionProjectSignature(file: string, cwd: string | undefined): Promise<string> {
  return `${file}|${cwd ? await statSig(path.join(cwd, ".pi", "settings.json")) : "-"}`;
}

/** The current file by name only: its changes are a refresh, not a scan. */
export async function dirSignature(plans: readonly FolderPlan[], currentFile: string | undefined): Promise<string> {
  const out: string[] = [];
  const dirs = new Set(plans.flatMap((p) => p.dirs.map((d) => d.dir)));
  const roots = new Set(plans.flatMap((p) => (p.subfolders ? [p.subfolders.root] : [])));
  for (const root of roots) {
    try {
      const names = (await fs.promises.readdir(root)).sort();
      out.push(`${root}:${names.join(",")}`);
      // sub-folder session folders are session folders too
      for (const n of names)
        if (plans.some((p) => p.subfolders && n.startsWith(p.subfolders.prefix))) dirs.add(path.join(root, n));
    } catch {
      out.push(`${root}:-`);
    }
  }
  for (const dir of dirs) {
    let names: string[];
    try {
      names = (await fs.promises.readdir(dir)).filter((n) => n.endsWith(".jsonl")).sort();
    } catch {
      out.push(`${dir}:-`);
      continue;
    }
    const stats = new Map((await statFiles(names.map((n) => path.join(dir, n)))).map((s) => [s.file, s]));
    const sigs = names.map((n) => {
      const file = path.join(dir, n);
      const s = stats.get(file);
      return file === currentFile ? n : `${n}=${s ? `${s.size}:${s.mtimeMs}:${s.ino}` : "-"}`;
    });
    out.push(`${dir}:${sigs.join(",")}`);
  }
  return out.join("\n");
}
