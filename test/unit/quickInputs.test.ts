/**
 * Every quick pick and input box of the extension ignores the focus moving out (`ignoreFocusOut`):
 * a webview that takes the focus as it loads (the panel just opened, a loaded machine) or a live
 * update must not close a question the user is answering. Select Session once had no
 * `ignoreFocusOut` and closed under the e2e tests when the panel's webview took the focus late.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../support/paths";

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (e.name.endsWith(".ts")) out.push(rel);
  }
  return out;
}

/** The text of a call from its opening parenthesis at `open` to the matching one (strings ignored). */
function callText(text: string, open: number): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

describe("quick inputs", () => {
  it("every showQuickPick / showInputBox passes ignoreFocusOut: true, every createQuickPick / createInputBox sets it", () => {
    const missing: string[] = [];
    let calls = 0;
    for (const rel of sourceFiles("src")) {
      const text = fs.readFileSync(path.join(REPO_ROOT, rel), "utf8");
      const line = (at: number) => `${rel}:${text.slice(0, at).split("\n").length}`;
      for (const m of text.matchAll(/window\.(showQuickPick|showInputBox)\(/g)) {
        calls++;
        if (!/ignoreFocusOut:\s*true/.test(callText(text, m.index! + m[0].length - 1))) missing.push(line(m.index!));
      }
      for (const m of text.matchAll(
        /(?:const|let)\s+(\w+)\s*=\s*vscode\.window\.(createQuickPick|createInputBox)\b/g,
      )) {
        calls++;
        if (!new RegExp(`\\b${m[1]}\\.ignoreFocusOut\\s*=\\s*true`).test(text)) missing.push(line(m.index!));
      }
    }
    assert.ok(calls >= 15, `found the quick inputs (${calls})`);
    assert.deepEqual(missing, [], "quick inputs without ignoreFocusOut");
  });
});
