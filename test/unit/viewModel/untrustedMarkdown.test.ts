/**
 * Session text in Markdown renders as text (issue 16, item 11): the gauge tooltip (a trusted
 * MarkdownString with command links of our own), the Pi Session tree's row tooltips, and the text
 * of notifications (VS Code makes `[x](command:…)` in them clickable). Rendered with `marked` and
 * GFM, as VS Code renders hovers: a session name or label with a lone CR + `#`/`===`/`1.`, bare
 * `https://` / `www.` / e-mail text, links, images, HTML, theme icons, pipes, backtick fences —
 * none becomes markup; the text is still all there.
 */

import { strict as assert } from "node:assert";
import { before, describe, it } from "node:test";
import fc from "fast-check";
import { SessionFile } from "../../../src/core/read/session";
import { analyzeLoaded } from "../../../src/core/rules/analyze";
import { SessionTreeModel } from "../../../src/core/treeModel/model";
import {
  markdownCode,
  markdownCodeBlock,
  markdownText,
  notificationText,
  themeIconMarkdownText,
} from "../../../src/shared/untrusted";
import { buildGaugeView } from "../../../src/viewModel/statusBar";
import { nodeDisplay } from "../../../src/viewModel/treeText";
import { treeTooltipMarkdown } from "../../../src/viewModel/treeTooltip";
import { SessionBuilder } from "../../support/session-builder";

const HOSTILE = [
  "name\r# Injected heading",
  "\r===",
  "\r1. list item",
  "\r- bullet",
  "\r> quote",
  "visit https://evil.example/x or www.evil.example or mail me@evil.example",
  "[click](command:workbench.action.terminal.new) ![img](https://evil.example/p.png)",
  "<img src=x onerror=alert(1)> &lt;b&gt; **bold** _it_ `code` ~~s~~",
  "$(alert) | pipe | \\ backslash",
  "   ```\n# after a fence",
  "\u202eevil\u001b[2J",
];
const NAME = HOSTILE.join(" ");

/** Rendered HTML → the text a reader sees (tags dropped, entities decoded, whitespace collapsed). */
function visibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}
const flat = (s: string) =>
  s
    .replace(/\r\n?|\n/g, " ")
    .replace(/\s+/g, " ")
    .trim();

let marked: { parse(md: string, options: { gfm: boolean; async: false }): string };
before(async () => {
  marked = ((await import("marked")) as { marked: typeof marked }).marked; // an ES module
});

function render(md: string): string {
  return marked.parse(md, { gfm: true, async: false });
}

/** VS Code's theme icon syntax (`renderLabelWithIcons`): `$(name)` or `$(name~modifier)`, escaped by a backslash. */
const ICON = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

/**
 * What VS Code shows of a `MarkdownString` with `supportThemeIcons` (our tooltips): the text
 * Markdown leaves, then every `$(name)` drawn as an icon (here `<icon name>`) and every `\$(name)`
 * shown as the text `$(name)` (VS Code's `renderLabelWithIcons` runs on the rendered text).
 */
function hoverText(md: string): string {
  return visibleText(render(md)).replace(ICON, (m, escaped: string | undefined, name: string) =>
    escaped ? m.slice(1) : `<icon ${name}>`,
  );
}

function session(extra: object[]): SessionFile {
  const b = new SessionBuilder({ id: "s", cwd: "/w" })
    .model("m", "anthropic", "claude-sonnet-4-5")
    .user("u", [{ type: "text", text: NAME }])
    .append(...extra);
  return SessionFile.fromBytes(b.jsonl());
}

describe("untrusted text in Markdown renders as text", () => {
  it("the gauge tooltip: a hostile session name is one line of text; the only links are our commands", () => {
    const s = session([{ type: "session_info", id: "i", parentId: "u", timestamp: "t", name: NAME }]);
    const analysis = analyzeLoaded(s, { agentDir: "/nonexistent-agent", projectSettings: "never" });
    const v = buildGaugeView({
      session: { file: "/w/s.jsonl", analysis, pinned: false, updatedAt: 0, modifiedAt: 0 },
      margin: 10000,
      locale: "en-US",
    });
    const html = render(v.tooltip);
    for (const href of html.match(/href="[^"]*"/g) ?? []) assert.match(href, /^href="command:piContext\./, href);
    assert.doesNotMatch(html, /<h[1-6]|<img|<ol|<blockquote|<pre/);
    // the name as VS Code shows it (theme icons on): its `$(alert)` is text, not an icon (trial 6)
    const shown = hoverText(v.tooltip);
    assert.ok(shown.includes(hoverText(themeIconMarkdownText(NAME))));
    assert.ok(hoverText(themeIconMarkdownText(NAME)).includes("$(alert) | pipe"));
    assert.doesNotMatch(hoverText(themeIconMarkdownText(NAME)), /<icon /);
    assert.ok(shown.includes("name # Injected heading"), "the name's words are all shown");
  });

  it("the tree tooltip: label, text, model and a summary with a fence in it stay text / code", () => {
    const s = session([
      { type: "label", id: "l", parentId: "u", timestamp: "t", targetId: "u", label: NAME },
      {
        type: "compaction",
        id: "c",
        parentId: "l",
        timestamp: "t",
        summary: "## Goal\n````\n  ```\n[x](https://evil.example)\n",
        firstKeptEntryId: "u`x",
        tokensBefore: 100,
      },
    ]);
    const model = new SessionTreeModel(s, { filter: "all" });
    for (const id of ["u", "c"]) {
      const md = treeTooltipMarkdown(nodeDisplay(model, id, s), model, undefined, "en-US");
      const html = render(md);
      assert.doesNotMatch(html, /<a |<h[1-6]|<img|<ol|<blockquote/, `${id}: ${html}`);
      if (id === "u") {
        assert.ok(visibleText(html).includes(flat("[click](command:workbench.action.terminal.new)")));
        // the label keeps its `$(alert)` as text in VS Code's hover (theme icons on); only our `$(tag)` is an icon
        assert.ok(hoverText(md).includes("$(alert) | pipe"), hoverText(md));
        assert.doesNotMatch(hoverText(md).replace("<icon tag>", ""), /<icon /, hoverText(md));
      }
      if (id === "c") {
        assert.equal((html.match(/<pre>/g) ?? []).length, 1, "one code block holds the whole summary");
        assert.match(html, /\[x\]\(https:\/\/evil\.example\)/);
      }
    }
  });

  it("markdownText over generated strings: no markup, same visible text", () => {
    const piece = fc.oneof(
      fc.constantFrom(
        ...HOSTILE,
        "\r",
        "\n",
        "\r\n",
        "http://a.b",
        "www.a.b",
        "a@b.co",
        "*",
        "_",
        "[",
        "](",
        "<",
        "&",
        "#",
        "|",
        "`",
      ),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const text = parts
          .join("")
          .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, " ");
        const html = render(`prefix ${markdownText(text)} suffix`);
        assert.doesNotMatch(html, /<(a|h[1-6]|img|ol|ul|blockquote|pre|code|em|strong|del|table|hr|br)\b/, html);
        assert.equal(visibleText(html), flat(`prefix ${text} suffix`));
      }),
      { numRuns: 3000 },
    );
  });

  it("themeIconMarkdownText over generated strings: no markup and no icon in VS Code's hover, same visible text", () => {
    const piece = fc.oneof(
      fc.constantFrom(
        ...HOSTILE,
        "$(zap)",
        "\\$(zap)",
        "\\\\$(bug)",
        "$(sync~spin)",
        "$(echo hi)",
        "$5 (x)",
        "$(",
        ")",
        "\\",
        "$",
      ),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const text = parts
          .join("")
          .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, " ");
        const md = `prefix ${themeIconMarkdownText(text)} suffix`;
        assert.doesNotMatch(render(md), /<(a|h[1-6]|img|ol|ul|blockquote|pre|code|em|strong|del|table|hr|br)\b/);
        const shown = hoverText(md);
        assert.doesNotMatch(shown, /<icon /, shown);
        // the one loss, as VS Code's own escapeIcons: a `\$(name)` written in the text shows as `$(name)`
        const expected = flat(`prefix ${text} suffix`).replace(ICON, (m, escaped: string | undefined) =>
          escaped ? m.slice(1) : m,
        );
        assert.equal(shown, expected);
      }),
      { numRuns: 3000 },
    );
  });

  it("markdownCode and markdownCodeBlock hold any text verbatim", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.string({ maxLength: 30 }), (a, b) => {
        const text = `${a}\`\`\`${b}`.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
        const inline = render(`x ${markdownCode(text)} y`);
        assert.equal((inline.match(/<code>/g) ?? []).length, 1, inline);
        const block = render(markdownCodeBlock(`${text}\n  \`\`\`\n# h`));
        assert.equal((block.match(/<pre>/g) ?? []).length, 1, block);
        assert.doesNotMatch(block, /<h1/);
      }),
      { numRuns: 2000 },
    );
  });

  it("notificationText: no `[x](command:…)` pattern survives (VS Code links them in notifications)", () => {
    const vsCodeLink = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi; // VS Code's parseLinkedText
    for (const s of [NAME, "[a](https://x.y)", "[a] (command:x)", "[[a](command:x)](file:/etc)"]) {
      const t = notificationText(s);
      assert.equal(t.match(vsCodeLink), null, t);
      const unescaped = t
        .replace(/\u200b/g, "")
        .replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      assert.equal(unescaped, s, "the same text, made inert");
    }
  });
});
