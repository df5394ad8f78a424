/** The shapes of the process table (`table.ts`), shared by the platform readers. */

/** One process of the table. */
export interface ProcessInfo {
  pid: number;
  /** Parent process id (0 when unknown). */
  ppid: number;
  /** The arguments as far as the platform tells them (macOS: the command split at spaces). */
  argv: string[];
  /** The command line as one string (for messages). */
  command: string;
  /** Start time, ms since epoch, when known. */
  startedAt?: number;
  /** Working directory, when known (only looked up for pi processes). */
  cwd?: string;
}

/** A running pi: the process, and what its command line says about its session. */
export interface PiProcess extends ProcessInfo {
  /** `--session <path|id>` as given (Windows, or a pi that keeps its arguments). */
  sessionArg?: string;
  /** `--session-dir <dir>` as given. */
  sessionDirArg?: string;
}

/** A whole table read at one moment. */
export interface ProcessSnapshot {
  /** ms since epoch. */
  at: number;
  platform: NodeJS.Platform;
  processes: ProcessInfo[];
  /** The pi processes among them (with `cwd` where the platform gives it). */
  pi: PiProcess[];
  /** Set when the table could not be read (the tool failed, no `/proc`): then `processes` is empty. */
  error?: string;
}
