/** What session discovery writes to the log, each thing once (what the tooltip says is "in the log"). */

import * as path from "node:path";
import type * as vscode from "vscode";
import type { CurrentSession } from "../services";
import { SKIP_REASONS, type ScanResult } from "./scan";

/** The once-only log of discovery (see the file comment). */
export class DiscoveryLog {
  private loggedProblems = "";
  private loggedDiagnostics = new Map<string, Set<string>>();
  private loggedSkipped = new Map<string, string>();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Log each `.jsonl` that is not shown because it is not (yet) a pi session, once per file and reason. */
  skipped(skipped: ScanResult["skipped"]): void {
    const now = new Map(skipped.map((s) => [s.file, s.reason]));
    for (const [file, reason] of now) {
      if (this.loggedSkipped.get(file) === reason) continue;
      this.log.info(`skipped ${file}: it ${SKIP_REASONS[reason]}`);
    }
    this.loggedSkipped = now;
  }

  /** Log settings problems and new diagnostics once (never as notifications). */
  problems(current: CurrentSession): void {
    const problems = current.analysis.inspect.settingsProblems;
    const key = JSON.stringify(problems) + (current.analysis.modelsError ?? "");
    if (key !== this.loggedProblems) {
      this.loggedProblems = key;
      for (const p of problems) this.log.warn(`pi settings: ${p.file}${p.key ? ` (${p.key})` : ""}: ${p.message}`);
      if (current.analysis.modelsError) this.log.warn(`pi models: ${current.analysis.modelsError}`);
    }
    // every problem the tooltip and the panel list (reading and tree diagnostics: missing parents,
    // cycles, concurrent writers…), each once per file
    let logged = this.loggedDiagnostics.get(current.file);
    if (!logged) this.loggedDiagnostics.set(current.file, (logged = new Set()));
    for (const d of current.analysis.inspect.diagnostics) {
      if (d.code === "truncated-final-line") continue; // pi is mid-write; not worth a log line
      const key = `${d.code}\u0000${d.line ?? ""}\u0000${d.message}`;
      if (logged.has(key)) continue;
      logged.add(key);
      const text = `${path.basename(current.file)}${d.line !== undefined ? `:${d.line}` : ""}: ${d.message} [${d.code}]`;
      if (d.severity === "info") this.log.info(text);
      else this.log.warn(text);
    }
  }
}
