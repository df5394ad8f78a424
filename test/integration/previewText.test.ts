/**
 * The compaction preview's "Show details" document (`compaction/preview.ts` `previewMarkdown`), in the
 * real extension host: session text (the session's name, the files its tools touched, entry ids) is
 * shown as text — escaped Markdown or code spans — never as a link, HTML or heading; the document's
 * own words go through `vscode.l10n.t`.
 */

import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { planCompaction } from "../../src/core/flows/compact";
import { previewMarkdown, type PreviewSummarizer } from "../../src/compaction/preview";
import { FIXTURES } from "../support/paths";

const EVIL_NAME = "[click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)> # heading `code`";
const EVIL_FILE = "/tmp/a`b](command:evil)<b>bold</b>.ts";

describe("compaction preview document: session text stays text", () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-preview-text-"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("a hostile session name and tracked file path appear escaped, the document's structure intact", async () => {
    const source = path.join(FIXTURES, "pi-1.6.0", "split.jsonl");
    const lines = fs.readFileSync(source, "utf8").trimEnd().split("\n");
    const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
    // pi's /name (a session_info entry on the leaf) and src/alpha.ts renamed to a hostile path
    lines.push(
      JSON.stringify({
        type: "session_info",
        id: "aaaa0001",
        parentId: last.id,
        timestamp: "2026-11-30T06:40:00.000Z",
        name: EVIL_NAME,
      }),
    );
    const text = lines.join("\n").replaceAll('"src/alpha.ts"', JSON.stringify(EVIL_FILE));
    const file = path.join(dir, "s.jsonl");
    fs.writeFileSync(file, text + "\n");
    const plan = await planCompaction(file, {
      agentDir: path.join(FIXTURES, "pi-1.6.0", "long.agent"),
      guardSeconds: 0,
      procRoot: null,
      maxOutputTokens: 4000,
    });
    const by: PreviewSummarizer = { name: "m", detailsLine: "model m <script>", needsApiKey: false };
    const md = previewMarkdown(plan, by);
    const title = md.split("\n")[0]!;
    assert.ok(title.startsWith("# Compaction preview — "), title);
    // outside code spans (shown verbatim): no link syntax, no HTML
    const prose = md.replace(/(?<!`)(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g, "");
    assert.ok(!prose.includes("](command:"), "no link syntax survives unescaped");
    assert.ok(!/(?<!\\)<(img|b|script)/.test(prose), prose);
    assert.ok(title.includes("\\[click\\]\\(command\\:"), title);
    assert.equal(md.split("\n").filter((l) => l.startsWith("# ")).length, 1, "the name adds no heading");
    assert.ok(
      plan.preview.readFiles.includes(EVIL_FILE) || plan.preview.modifiedFiles.includes(EVIL_FILE),
      "the fixture's src/alpha.ts became the hostile path",
    );
    assert.ok(md.includes("- ``/tmp/a`b](command:evil)<b>bold</b>.ts``"), md);
  });
});
