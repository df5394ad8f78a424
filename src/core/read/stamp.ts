/**
 * A change stamp of files without reading them: `mtimeMs:size:ino` per file (`-` when missing),
 * joined by `|`. The caches of configuration files (`rules/analyze.ts`), of pi's catalog
 * (`pi/catalog.ts`) and of the user's pi (`userPi/service.ts`) compare it to know when to re-read.
 */

import * as fs from "node:fs";

/** The stamp of `files` (one `stat` each; never throws). */
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
