/**
 * `docs/architecture.md` is the map of the code and must stay true: every source file of `src/`
 * and `webview/` is named in it (so a newcomer finds each one), and every file it names exists.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../support/paths";

const MAP = fs.readFileSync(path.join(REPO_ROOT, "docs", "architecture.md"), "utf8");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|mjs|css)$/.test(e.name)) out.push(rel);
  }
  return out;
}

/**
 * The files the map's tables name: every backticked path in a row's first cell, where a bare
 * name after a path is its sibling (`` `proc/linux.ts`, `darwin.ts` ``) and a `*` is a wildcard
 * (`` `webview/sections/*.ts` `` names the modules it lists in backticks), plus every backticked
 * path anywhere in the text.
 */
function namedPaths(): { exact: Set<string>; globs: { re: RegExp; names: Set<string> | undefined }[] } {
  const exact = new Set<string>();
  const globs: { re: RegExp; names: Set<string> | undefined }[] = [];
  for (const m of MAP.matchAll(/`([\w./*-]+\/[\w.*-]+\.(?:ts|mjs|css))`/g)) exact.add(m[1]!);
  for (const line of MAP.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const cells = line.split(" | ");
    let dir = "";
    for (const m of cells[0]!.matchAll(/`([^`]+)`/g)) {
      const token = m[1]!;
      if (!/\.(ts|mjs|css)$/.test(token)) continue;
      if (token.includes("/")) dir = token.slice(0, token.lastIndexOf("/") + 1);
      const full = token.includes("/") ? token : dir + token;
      if (full.includes("*")) {
        const re = new RegExp(`^${full.replace(/[.]/g, "\\.").replace("*", "([\\w-]+)")}$`);
        const listed = new Set([...line.slice(cells[0]!.length).matchAll(/`([\w-]+)`/g)].map((x) => x[1]!));
        globs.push({ re, names: full.endsWith(".ts") ? listed : undefined });
      } else exact.add(full);
    }
  }
  return { exact, globs };
}

const NAMED = namedPaths();

/** Whether the map names `file`: by its path from the repository or from `src/`, `src/core/` or `webview/`. */
function named(file: string): boolean {
  const forms = [file, file.replace(/^src\//, ""), file.replace(/^src\/core\//, ""), file.replace(/^webview\//, "")];
  return forms.some(
    (f) =>
      NAMED.exact.has(f) ||
      NAMED.globs.some((g) => {
        const m = g.re.exec(f);
        return !!m && (!g.names || g.names.has(m[1]!));
      }),
  );
}

describe("docs/architecture.md", () => {
  it("names every source file of src/ and webview/", () => {
    const missing = [...sourceFiles("src"), ...sourceFiles("webview")].filter((f) => !named(f));
    assert.deepEqual(missing, []);
  });

  it("every src/… or webview/… file it names exists", () => {
    const paths = [...MAP.matchAll(/`((?:src|webview)\/[\w./-]+\.(?:ts|mjs|css))`/g)].map((m) => m[1]!);
    assert.ok(paths.length > 50, `${paths.length} paths found`);
    const gone = [...new Set(paths)].filter((p) => !fs.existsSync(path.join(REPO_ROOT, p)));
    assert.deepEqual(gone, []);
  });
});
