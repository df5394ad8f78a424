/**
 * The process table the live-session guard sees, replaceable for tests: when the environment
 * variable {@link GUARD_PROCESSES_ENV} is set, the guard (`flows/live.ts`) uses the pi processes it
 * lists instead of reading the machine's process table. Test runners set it (`[]`: no pi runs), so
 * a test that appends to a session never depends on the pi processes other people run on the same
 * machine; a test that wants the guard to see a pi lists that process (it can copy one of its own
 * from a real snapshot). The terminal follower (`sessions/terminals.ts`) is not affected.
 *
 * The value is either JSON (starting with `[` or `{`) or the path of a JSON file, read on every
 * check (a test can change it while the extension runs). The JSON is an array of pi processes
 * (`PiProcess`: `pid`, `ppid`, `argv`, `command`, optional `cwd`, `sessionArg`, `sessionDirArg`) or
 * a `ProcessSnapshot` with such a `pi` array.
 */

import * as fs from "node:fs";
import type { PiProcess, ProcessSnapshot } from "./types";

/** `PI_CONTEXT_GUARD_PROCESSES`: JSON or a JSON file path, see the file comment. */
export const GUARD_PROCESSES_ENV = "PI_CONTEXT_GUARD_PROCESSES";

/**
 * The guard's process table from {@link GUARD_PROCESSES_ENV}; undefined when it is not set (read the
 * machine's table).
 * @throws Error naming the variable when its value (or file) is not the JSON described above: a
 *   misconfigured override must fail loudly, never silently turn the guard off.
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
