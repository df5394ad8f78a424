/** Runs the platform's process tools without a shell, with a deadline, bounded output and the C locale. */

import { execFile } from "node:child_process";

export type CommandRunner = (
  file: string,
  args: readonly string[],
  options?: { acceptExitCodes?: readonly number[] },
) => Promise<string>;

/** ms; PowerShell's cold start takes about a second. */
export const RUN_TIMEOUT_MS = 5000;

/** `execFile` runner; `acceptExitCodes` count as success (`lsof` exits 1 when one pid is gone). */
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
