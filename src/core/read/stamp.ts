/** `mtimeMs:size:ino` per file (`-` when missing), joined by `|`: caches compare it to know when to re-read. */

import * as fs from "node:fs";

/** One `stat` each; never throws. */
export function fileStamp(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const st = fs.statSync(f);
        return `${st.mtimeMs}:${st.size}:${st.ino}`;
      } catch {
        return "-";
      }
    })
    .join("|");
}
