/** The shapes of the process table (`table.ts`), shared by the platform readers. */

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** macOS: the command split at spaces. */
  argv: string[];
  command: string;
  startedAt?: number;
  /** Only looked up for pi processes. */
  cwd?: string;
}

export interface PiProcess extends ProcessInfo {
  sessionArg?: string;
  sessionDirArg?: string;
}

export interface ProcessSnapshot {
  at: number;
  platform: NodeJS.Platform;
  processes: ProcessInfo[];
  pi: PiProcess[];
  /** Set when the table could not be read; then `processes` is empty. */
  error?: string;
}
