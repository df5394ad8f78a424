/**
 * `summaryPreviewMarkdown`: a summary (LLM output, from the session) opened in VS Code's own
 * markdown preview keeps its markdown but carries no HTML and loads nothing. Judged with
 * markdown-it configured as VS Code's preview configures it (`html: true`, `linkify: true`).
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import MarkdownIt from "markdown-it";
import { summaryPreviewMarkdown } from "../../../src/shared/summaryMarkdown";

const md = new MarkdownIt({ html: true, linkify: true });
const render = (summary: string) => md.render(summaryPreviewMarkdown(summary));

/** Tags markdown-it writes for markdown itself; anything else in the HTML came from the text. */
const MARKDOWN_TAGS = new Set([
  "p", "code", "pre", "em", "strong", "a", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
  "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "s",
]); // prettier-ignore

function foreignTags(html: string): string[] {
  return [...html.matchAll(/<\/?([A-Za-z][\w-]*)/g)]
    .map((m) => m[1]!.toLowerCase())
    .filter((t) => !MARKDOWN_TAGS.has(t));
}

describe("summaryPreviewMarkdown", () => {
  it("pi's file blocks: a titled code block each (the preview dropped the tags and ran the paths together)", () => {
    const summary =
      "## Goal\nShip it.\n\n<read-files>\nsrc/a.ts\nsrc/b.ts\n</read-files>\n\n<modified-files>\nsrc/c.ts\n</modified-files>";
    const html = render(summary);
    assert.match(html, /<h2>Goal<\/h2>/);
    assert.match(html, /<strong>Read files<\/strong>/);
    assert.match(html, /<code>src\/a\.ts\nsrc\/b\.ts\n<\/code>/);
    assert.match(html, /<strong>Modified files<\/strong>/);
    assert.deepEqual(foreignTags(html), []);
  });

  it("raw HTML and images are text; code spans with markup are plain text; a lone < stays", () => {
    const summary = [
      'Saw <img src="https://tracker.example/p.png"> and <script>alert(1)</script> and <!-- note -->.',
      "![chart](https://tracker.example/c.png) and ![ref][r]",
      "",
      "[r]: https://tracker.example/r.png",
      "",
      "Keep `Array<string>` and `` a ` <b> `` as text, `plain` as code; 1 < 2 and x <3.",
      "",
      "```ts",
      "const el = <div>hi</div>;",
      "```",
    ].join("\n");
    const html = render(summary);
    assert.deepEqual(foreignTags(html), []);
    assert.doesNotMatch(html, /<img/);
    assert.match(html, /Saw &lt;img src=&quot;/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /!<a href="https:\/\/tracker\.example\/c\.png">chart<\/a>/, "the image is a link, not loaded");
    assert.match(
      html,
      /Keep Array&lt;string&gt; and a ` &lt;b&gt; as text, <code>plain<\/code> as code; 1 &lt; 2 and x &lt;3\./,
    );
    // the price: in a fenced block the escape shows as written
    assert.match(html, /<code class="language-ts">const el = &amp;lt;div&gt;hi&amp;lt;\/div&gt;;\n<\/code>/);
  });

  it("a summary without markup is shown exactly as written (code blocks included)", () => {
    const summary = "## Goal\n\n```ts\nif (a < 2) f(`x`);\n```\n\nUse `a<2`.";
    assert.equal(summaryPreviewMarkdown(summary), summary);
  });

  it("a backslash-escaped backtick opens no code span; a code span markdown closes on a later line is not trusted", () => {
    assert.deepEqual(foreignTags(render("\\`<img src=x>`")), []);
    assert.deepEqual(foreignTags(render("`foo\nbar` <img src=x> `baz`")), []);
    assert.deepEqual(foreignTags(render("`a` `b\nc` <iframe src=x></iframe> `d`")), []);
  });

  it("property: whatever the pieces, the preview's HTML has only markdown's own tags", () => {
    const pieces = [
      "<img src=x>", "<img src='https://x/y'>", "<script>", "</script>", "<!--", "-->", "<?x?>", "<!DOCTYPE>",
      "<div>", "</div>", "<a href=x>", "<read-files>", "</read-files>", "<http://x.example>", "![a](https://x/i.png)",
      "![a][r]", "[r]: https://x/i.png", "`", "``", "```", "~~~", "    ", "\\", "\\`", "!", "[", "](", ")", "<", ">",
      "text", " ", "\n", "\n\n", "> ", "- ", "# ", "1. ", "|a|b|\n|-|-|\n", "https://x.example/", "www.x.example",
      "[a](x`", "`)", "  ", "&lt;", "&#60;", "<b", "\\<",
    ]; // prettier-ignore
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const summary = parts.join("");
        const html = render(summary);
        assert.deepEqual(foreignTags(html), [], JSON.stringify(summary));
      }),
      { numRuns: 3000 },
    );
  });
});
