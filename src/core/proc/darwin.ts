/** macOS: the process table from `ps`, and the pi processes' working directories from one `lsof`. */

import type { CommandRunner } from "./run";
import type { ProcessInfo } from "./types";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const PS_LINE = /^\s*(\d+)\s+(\d+)\s+\w{3} (\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4}) (.*)$/;

/**
 * Parse `ps -axww -o pid=,ppid=,lstart=,command=` output; `lstart` is local time. `argv` is the
 * command split at spaces (ps does not say where an argument ends). Bad lines are skipped.
 */
export function parsePsOutput(text: string): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const line of text.split("\n")) {
    const m = PS_LINE.exec(line.replace(/\r$/, ""));
    if (!m) continue;
    const month = MONTHS.indexOf(m[3]!);
    const command = m[9]!.trim();
    if (!command) continue;
    const info: ProcessInfo = { pid: Number(m[1]), ppid: Number(m[2]), argv: command.split(/\s+/), command };
    if (month >= 0)
      info.startedAt = new Date(Number(m[8]), month, Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7])).getTime();
    out.push(info);
  }
  return out;
}

/** Parse `lsof -a -d cwd -Fn -p …` output into pid → working directory. */
export function parseLsofCwd(text: string): Map<number, string> {
  const out = new Map<number, string>();
  let pid: number | undefined;
  for (const line of text.split("\n")) {
    const tag = line[0];
    const value = line.slice(1).replace(/\r$/, "");
    if (tag === "p") pid = Number(value);
    // Linux lsof prints an unreadable cwd as `/proc/1/cwd (readlink: Permission denied)`
    else if (tag === "n" && pid !== undefined && !out.has(pid) && !/ \((readlink|stat): [^)]*\)$/.test(value))
      out.set(pid, value);
  }
  return out;
}

export async function listDarwinProcesses(
  run: CommandRunner,
  wantCwd: (argv: readonly string[]) => boolean,
): Promise<ProcessInfo[]> {
  const processes = parsePsOutput(await run("/bin/ps", ["-axww", "-o", "pid=,ppid=,lstart=,command="]));
  const wanted = processes.filter((p) => wantCwd(p.argv));
  if (wanted.length > 0) {
    const text = await run("/usr/sbin/lsof", ["-a", "-d", "cwd", "-Fn", "-p", wanted.map((p) => p.pid).join(",")], {
      acceptExitCodes: [1],
    }).catch(() => "");
    const cwds = parseLsofCwd(text);
    for (const p of wanted) {
      const cwd = cwds.get(p.pid);
      if (cwd !== undefined) p.cwd = cwd;
    }
  }
  return processes;
}
