/** Windows: one PowerShell CIM query; `cwd` is unreadable without native code, but pi keeps its arguments. */

import type { CommandRunner } from "./run";
import type { ProcessInfo } from "./types";

export const WIN32_PROCESS_SCRIPT =
  "[Console]::OutputEncoding = [Text.Encoding]::UTF8; " +
  "@(Get-CimInstance -ClassName Win32_Process | ForEach-Object { [pscustomobject]@{ " +
  "p = $_.ProcessId; pp = $_.ParentProcessId; n = $_.Name; c = $_.CommandLine; " +
  "t = $(if ($_.CreationDate) { $_.CreationDate.ToUniversalTime().ToString('o') } else { $null }) } }) " +
  "| ConvertTo-Json -Compress";

/** Split a Windows command line into arguments like `CommandLineToArgvW` (backslash-quote rules included). */
export function splitWindowsCommandLine(line: string): string[] {
  const out: string[] = [];
  let current = "";
  let inArg = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\") {
      let n = 0;
      while (line[i + n] === "\\") n++;
      if (line[i + n] === '"') {
        current += "\\".repeat(Math.floor(n / 2));
        if (n % 2 === 1) current += '"';
        else quoted = !quoted;
        i += n;
      } else {
        current += "\\".repeat(n);
        i += n - 1;
      }
      inArg = true;
    } else if (c === '"') {
      quoted = !quoted;
      inArg = true;
    } else if ((c === " " || c === "\t") && !quoted) {
      if (inArg) out.push(current);
      current = "";
      inArg = false;
    } else {
      current += c;
      inArg = true;
    }
  }
  if (inArg) out.push(current);
  return out;
}

/** Parse {@link WIN32_PROCESS_SCRIPT}'s JSON (PowerShell 5: a lone object). @throws SyntaxError when not JSON. */
export function parseWin32Processes(text: string): ProcessInfo[] {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (!trimmed) return [];
  const value: unknown = JSON.parse(trimmed);
  const rows = Array.isArray(value) ? value : [value];
  const out: ProcessInfo[] = [];
  for (const row of rows) {
    if (!row || typeof row !== "object") continue;
    const r = row as { p?: unknown; pp?: unknown; n?: unknown; c?: unknown; t?: unknown };
    if (typeof r.p !== "number") continue;
    const command = typeof r.c === "string" && r.c.trim() ? r.c.trim() : typeof r.n === "string" ? r.n : "";
    if (!command) continue;
    const info: ProcessInfo = {
      pid: r.p,
      ppid: typeof r.pp === "number" ? r.pp : 0,
      argv: splitWindowsCommandLine(command),
      command,
    };
    const started = typeof r.t === "string" ? Date.parse(r.t) : NaN;
    if (Number.isFinite(started)) info.startedAt = started;
    out.push(info);
  }
  return out;
}

export async function listWindowsProcesses(run: CommandRunner): Promise<ProcessInfo[]> {
  const text = await run("powershell.exe", [
    "-NoLogo",
    "-NoProfile",
    "-NonInteractive",
    "-Command",
    WIN32_PROCESS_SCRIPT,
  ]);
  return parseWin32Processes(text);
}
