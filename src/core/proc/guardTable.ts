/**
 * Test override of the process table the access guard (`access/gather.ts`) sees: JSON (or a JSON file
 * path, read on every check) of `PiProcess[]` or a `ProcessSnapshot`, so tests never depend on other
 * people's pi processes. Test runners set `[]`.
 */

import * as fs from "node:fs";
import type { PiProcess, ProcessSnapshot } from "./types";

export const GUARD_PROCESSES_ENV = "PI_CONTEXT_GUARD_PROCESSES";

/**
 * The table from {@link GUARD_PROCESSES_ENV}, or undefined when unset.
 * @throws Error naming the variable when bad: a broken override must never turn the guard off.
 */
export async function guardProcessesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProcessSnapshot | undefined> {
  const value = env[GUARD_PROCESSES_ENV];
  if (value === undefined || value === "") return undefined;
  const trimmed = value.trimStart();
  let text: string;
  try {
    text = trimmed.startsWith("[") || trimmed.startsWith("{") ? value : await fs.promises.readFile(value, "utf8");
  } catch (error) {
    throw new Error(`${GUARD_PROCESSES_ENV}: cannot read ${value}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${GUARD_PROCESSES_ENV}: not JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { pi?: unknown } | null)?.pi;
  if (!Array.isArray(list) || !list.every(isPiProcess))
    throw new Error(
      `${GUARD_PROCESSES_ENV}: expected an array of pi processes ({ pid, ppid, argv, command, cwd? }) or a snapshot with one`,
    );
  const pi = list as PiProcess[];
  return { at: Date.now(), platform: process.platform, processes: pi, pi };
}

function isPiProcess(p: unknown): p is PiProcess {
  if (typeof p !== "object" || p === null) return false;
  const o = p as Record<string, unknown>;
  return (
    Number.isInteger(o.pid) &&
    Number.isInteger(o.ppid) &&
    Array.isArray(o.argv) &&
    o.argv.every((a) => typeof a === "string") &&
    typeof o.command === "string" &&
    (o.cwd === undefined || typeof o.cwd === "string") &&
    (o.sessionArg === undefined || typeof o.sessionArg === "string") &&
    (o.sessionDirArg === undefined || typeof o.sessionDirArg === "string")
  );
}
