/**
 * The `pi-context` CLI run in-process for tests: `main(argv)` with its output captured (through the
 * same `terminalText` boundary a terminal sees), and session files written an hour old so the
 * live-session guard's write-age check lets the CLI append.
 */

import * as fs from "node:fs";
import { main } from "../../src/cli/main";

/** What one CLI run printed and returned. */
export interface CliRun {
  code: number;
  /** stdout lines joined with `\n`. */
  out: string;
  /** stderr lines joined with `\n`. */
  err: string;
}

/** Run `pi-context <args>` in this process; resolves with the exit code and the captured output. */
export async function runCli(args: readonly string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    args,
    (s) => out.push(s),
    (s) => err.push(s),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** Write `jsonl` to `file` with an mtime an hour ago (not live for the write-age guard); returns `file`. */
export function writeOldSession(file: string, jsonl: string): string {
  fs.writeFileSync(file, jsonl);
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(file, old, old);
  return file;
}
