/** Linux: the process table from `/proc` (`stat`, `cmdline`, and `cwd` only for the processes `wantCwd` picks). */

import * as fs from "node:fs";
import * as path from "node:path";
import type { ProcessInfo } from "./types";

/** `sysconf(_SC_CLK_TCK)`: 100 on every Linux we know. */
const CLOCK_TICKS = 100;

/** Parent pid and start ticks from `/proc/<pid>/stat` (fields 4, 22 after the name, which may contain `)`). */
export function parseProcStat(text: string): { ppid: number; startTicks: number } | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" "); // fields[0] is field 3 (state)
  const ppid = Number(fields[1]);
  const startTicks = Number(fields[19]);
  if (!Number.isFinite(ppid) || !Number.isFinite(startTicks)) return undefined;
  return { ppid, startTicks };
}

export function parseBootTime(text: string): number | undefined {
  const m = /^btime (\d+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : undefined;
}

/** `cmdline` arguments; trailing NULs (a rewritten title) dropped. */
export function parseCmdline(text: string): string[] {
  return text.split("\0").filter((a) => a !== "");
}

/** Every process of `procRoot`. @throws when `procRoot` cannot be listed. */
export async function listLinuxProcesses(
  procRoot: string,
  wantCwd: (argv: readonly string[]) => boolean,
): Promise<ProcessInfo[]> {
  const names = (await fs.promises.readdir(procRoot)).filter((n) => /^\d+$/.test(n));
  const bootMs = await fs.promises.readFile(path.join(procRoot, "stat"), "utf8").then(parseBootTime, () => undefined);
  const out: ProcessInfo[] = [];
  const one = async (name: string): Promise<void> => {
    const dir = path.join(procRoot, name);
    try {
      const [statText, cmdline] = await Promise.all([
        fs.promises.readFile(path.join(dir, "stat"), "utf8").catch(() => ""),
        fs.promises.readFile(path.join(dir, "cmdline"), "utf8"),
      ]);
      const stat = parseProcStat(statText);
      const argv = parseCmdline(cmdline);
      if (argv.length === 0) return; // kernel threads, zombies
      const info: ProcessInfo = { pid: Number(name), ppid: stat?.ppid ?? 0, argv, command: argv.join(" ") };
      if (stat && bootMs !== undefined) info.startedAt = bootMs + (stat.startTicks * 1000) / CLOCK_TICKS;
      if (wantCwd(argv)) {
        const cwd = await fs.promises.readlink(path.join(dir, "cwd")).catch(() => undefined);
        if (cwd !== undefined) info.cwd = cwd;
      }
      out.push(info);
    } catch {}
  };
  for (let i = 0; i < names.length; i += 64) await Promise.all(names.slice(i, i + 64).map(one));
  out.sort((a, b) => a.pid - b.pid);
  return out;
}
