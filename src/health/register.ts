/**
 * The session-health surface: "Pi Context: Check Session Health" (`command.ts`) and the log — every new
 * finding of the doctor about the shown session is written to the output channel once (errors
 * as errors, warnings as warnings, notes as info), with its code, entry and line.
 */

import { checkHealth } from "../core/health/doctor";
import type { HealthFinding } from "../core/health/types";
import type { CurrentSession, Services } from "../services";
import { healthTitle } from "../viewModel/health";
import { HealthCommand, type HealthCommandOptions } from "./command";

/** What the surface exposes (tests). */
export interface HealthSurface {
  command: HealthCommand;
  /** Findings logged so far for the shown file (keys `code@entry:line`). */
  logged(): ReadonlySet<string>;
}

const keyOf = (f: HealthFinding) => `${f.code}@${f.entryId ?? ""}:${f.line ?? ""}`;

/** Register the command and the log of findings. */
export function registerHealth(services: Services): HealthSurface {
  const command = new HealthCommand(services);
  let file: string | undefined;
  let logged = new Set<string>();
  const log = (current: CurrentSession | undefined) => {
    if (!current) return;
    if (current.file !== file) {
      file = current.file;
      logged = new Set();
    }
    let findings: HealthFinding[];
    try {
      findings = checkHealth(current.analysis).findings;
    } catch (error) {
      services.log.warn(`health ${current.file}: the doctor failed: ${(error as Error).message}`);
      return;
    }
    for (const f of findings) {
      const key = keyOf(f);
      if (logged.has(key)) continue;
      logged.add(key);
      const line = `health ${current.file}: ${f.severity} ${f.code} (${healthTitle(f.code)})${f.entryId ? ` entry ${f.entryId}` : ""}${f.line !== undefined ? ` line ${f.line}` : ""}: ${f.message}`;
      if (f.severity === "error") services.log.error(line);
      else if (f.severity === "warning") services.log.warn(line);
      else services.log.info(line);
    }
  };
  services.commands.add({
    "piContext.checkHealth": (arg?: unknown, options?: HealthCommandOptions) => command.run(arg, options ?? {}),
  });
  services.context.subscriptions.push(services.sessions.onDidChange(log));
  log(services.sessions.current);
  return { command, logged: () => logged };
}
