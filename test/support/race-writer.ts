/**
 * A second writer for the write-race test (`test/conformance/write-race.test.ts`), in its own
 * process so that its writes land at any moment of our flow — also inside our synchronous check
 * and append. Reads one JSON command per stdin line, waits `delayMs` (+ `spinUs` busy-waiting for
 * sub-millisecond placement), does the operation with plain `fs` calls and answers
 * `{"id":…,"done":true}` (or `{"id":…,"error":"…"}`).
 *
 *   append   {line}           one O_APPEND write of a whole line (as pi appends)
 *   truncate {size}           ftruncate to a line boundary inside the original bytes
 *   rewrite  {offset, byte}   one byte changed in place (same inode, same size)
 *   replace  {from}           rename(from → file): another inode under the same name
 *   none                      nothing
 */

import * as fs from "node:fs";
import * as readline from "node:readline";

/** A command of the race writer. */
export type RaceOp =
  | { op: "append"; line: string }
  | { op: "truncate"; size: number }
  | { op: "rewrite"; offset: number; byte: number }
  | { op: "replace"; from: string }
  | { op: "none" };

/** One command line: the file, the operation, and when. */
export type RaceCommand = RaceOp & { id: number; file: string; delayMs: number; spinUs: number };

/** Do one operation now. */
export function applyRaceOp(file: string, op: RaceOp): void {
  switch (op.op) {
    case "append": {
      const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND);
      try {
        fs.writeSync(fd, op.line);
      } finally {
        fs.closeSync(fd);
      }
      return;
    }
    case "truncate":
      fs.truncateSync(file, op.size);
      return;
    case "rewrite": {
      const fd = fs.openSync(file, "r+");
      try {
        fs.writeSync(fd, Buffer.from([op.byte]), 0, 1, op.offset);
      } finally {
        fs.closeSync(fd);
      }
      return;
    }
    case "replace":
      fs.renameSync(op.from, file);
      return;
    case "none":
      return;
  }
}

function spin(us: number): void {
  const end = process.hrtime.bigint() + BigInt(Math.round(us * 1000));
  while (process.hrtime.bigint() < end) {
    // busy-wait: place the operation finer than a timer can
  }
}

if (require.main === module) {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (!line.trim()) return;
    const command = JSON.parse(line) as RaceCommand;
    setTimeout(() => {
      try {
        spin(command.spinUs);
        applyRaceOp(command.file, command);
        process.stdout.write(`${JSON.stringify({ id: command.id, done: true })}\n`);
      } catch (error) {
        process.stdout.write(`${JSON.stringify({ id: command.id, error: (error as Error).message })}\n`);
      }
    }, command.delayMs);
  });
}
