/**
 * Running the platform's process tools (`ps`, `lsof`, PowerShell) without blocking: `execFile`
 * (no shell), a deadline, a bounded output, the C locale (fixed date and number formats).
 */

import { execFile } from "node:child_process";

/** Runs `file` with `args` and resolves with its standard output; rejects on failure or timeout. */
export type CommandRunner = (
  file: string,
  args: readonly string[],
  options?: { acceptExitCodes?: readonly number[] },
) => Promise<string>;

/** Deadline of one process-tool run (ms): PowerShell's cold start takes about a second. */
export const RUN_TIMEOUT_MS = 5000;

/**
 * The real runner: `execFile` with {@link RUN_TIMEOUT_MS}, 32 MB of output at most, `LC_ALL=C`.
 * `acceptExitCodes`: exit codes that still count as success (`lsof` exits 1 when one pid is gone).
 */
export const defaultRunner: CommandRunner = (file, args, options = {}) =>
  new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      {
        timeout: RUN_TIMEOUT_MS,
        maxBuffer: 32 * 1024 * 1024,
        windowsHide: true,
        encoding: "utf8",
        env: { ...process.env, LC_ALL: "C", LANG: "C" },
      },
      (error, stdout) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (error && !(typeof code === "number" && options.acceptExitCodes?.includes(code))) reject(error);
        else resolve(stdout);
      },
    );
  });
