// E2E: the fixed part of the context in the real workbench (code-server + Chromium): the panel's
// "System prompt & tools" drills down into groups (tools, pi's prompt, context files, MCP, skills,
// extension sections) and each group into its parts — tokens equal to `pi-context inspect --json`,
// what each cost over the branch's 25 requests, whether a tool was ever called, how to leave it out
// in pi — and the gauge tooltip's "Fixed part" line. A skill name with markup in it (escaped by pi,
// as pi writes it) is shown as text. Screenshots in test-results/e2e/fixed-context-*.png.
//
// Isolation: its own workspace whose .vscode/settings.json points `piContext.agentDir` at a private
// agent dir (the fixture's models.json with the scripted model's prices).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  boxOf,
  clipAround,
  webviewFrameByTitle,
  inspectJson,
  privateProject,
  repoRoot,
  runCommand,
  screenshot,
  scrollIntoView,
  statusBarItem,
  unionBox,
  useWorkbench,
  waitUntil,
  webviewFrame,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "fixed-context");
/** The skill's name as pi writes it (XML-escaped in the skills section): `<b>db-migration</b>`. */
const MARKUP_SKILL = "&lt;b&gt;db-migration&lt;/b&gt;";

function setup() {
  const fx = privateProject("fixed", {
    agentFrom: path.join(FIXTURE, "session.agent"),
    settings: { "workbench.colorTheme": "Default Dark Modern" },
  });
  const text = readFileSync(path.join(FIXTURE, "session.jsonl"), "utf8").replace(
    "<name>db-migration</name>",
    `<name>${MARKUP_SKILL}</name>`,
  );
  assert.ok(text.includes(MARKUP_SKILL), "the skill is renamed in the system message");
  fx.sessionFile = fx.addSession(text, "2026-12-06T13-09-17-091Z_e2e-fixed.jsonl");
  return fx;
}

describe("e2e the fixed part of the context", () => {
  const suite = useWorkbench(setup, { width: 1400, height: 1100 });

  it("the panel: System prompt & tools → groups → parts, equal to inspect --json", async () => {
    const { page } = suite.wb;
    const cli = inspectJson(suite.fx.sessionFile, suite.fx.agentDir).fixedContext;
    await runCommand(page, "Pi Context: Open Context Panel");
    const frame = webviewFrame(page);
    const system = frame.locator('[data-testid="breakdown"] [data-category="system"]');
    await system.waitFor({ state: "visible", timeout: 60_000 });
    await system.click();
    const fixed = frame.locator('[data-testid="fixed-context"]');
    await fixed.waitFor({ state: "visible", timeout: 10_000 });
    assert.match(
      await fixed.locator(".fixed-session").innerText(),
      /^25 requests so far carried [\d,]+ fixed tokens \([\d,]+ read from the cache\): \$0\.0\d\d at the model's prices\.$/,
    );
    // the groups add up to pi's estimate of the system message, as inspect --json says it
    const groups = fixed.locator(".fixed-group");
    const labels = await groups.locator(".fixed-label").allInnerTexts();
    assert.deepEqual(labels, ["Tools", "pi's prompt", "Context files", "MCP", "Skills", "Extension sections"]);
    let sum = 0;
    for (const t of await groups.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-tokens"))))) sum += t;
    assert.equal(sum, cli.total);

    for (const id of ["tools", "contextFiles", "skills"]) {
      // the group opened before re-renders the list below it: a click during that layout can land on
      // the row that was there a moment ago, so click again until this group says it is open
      const expanded = fixed.locator(`.fixed-group[data-group="${id}"][aria-expanded="true"]`);
      await waitUntil(
        async () => {
          if ((await expanded.count()) > 0) return true;
          await fixed.locator(`.fixed-group[data-group="${id}"]`).click();
          return expanded.waitFor({ timeout: 2_000 }).then(
            () => true,
            () => false,
          );
        },
        15_000,
        `the ${id} group open`,
      );
    }
    const item = (name) => fixed.locator(`.fixed-item[data-part="${name}"]`);
    const codemode = item("codemode");
    await codemode.waitFor({ state: "visible", timeout: 10_000 });
    const part = (name) => cli.parts.find((p) => p.name === name);
    assert.equal(await codemode.locator(".fixed-tokens").innerText(), String(part("codemode").tokens));
    assert.match(await codemode.locator(".fixed-use").innerText(), /over 25 requests .* never called on this branch$/);
    assert.match(await codemode.getAttribute("class"), /\bunused\b/);
    assert.match(await item("read").locator(".fixed-use").innerText(), /called 1 time$/);
    assert.equal(
      await codemode.locator(".fixed-removal").innerText(),
      'Leave out in pi: --exclude-tools codemode or "extensions": ["-builtin:codemode"] in settings.json',
    );
    const projectFile = cli.parts.find((p) => p.kind === "context-file" && p.name.endsWith("/project/AGENTS.md"));
    const agents = item(projectFile.name);
    assert.equal(await agents.locator(".fixed-name").innerText(), "project/AGENTS.md");
    assert.equal(await agents.getAttribute("title"), projectFile.name);
    // a skill's name with markup in it: text, no element
    const skill = fixed.locator('.fixed-item[data-kind="skill"]', { hasText: "db-migration" });
    assert.equal(await skill.locator(".fixed-name").innerText(), "<b>db-migration</b>");
    assert.equal(await fixed.locator("b").count(), 0, "no markup from session text");

    await scrollIntoView(system);
    await page.waitForTimeout(500);
    await screenshot(page, "fixed-context-panel");
    await scrollIntoView(skill);
    await page.waitForTimeout(300);
    await screenshot(page, "fixed-context-panel-files-skills");
  });

  it("the narrow sidebar view: names, tokens, cost and removal stay readable", async () => {
    const { page } = suite.wb;
    await runCommand(page, "View: Close All Editors");
    const container = page.locator('.activitybar .action-item:has([aria-label^="Pi Context"])').first();
    if (!/\bchecked\b/.test((await container.getAttribute("class")) ?? ""))
      await container.locator('[aria-label^="Pi Context"]').first().click();
    const view = await webviewFrameByTitle(page, "Context", 30_000);
    const system = view.locator('[data-testid="breakdown"] [data-category="system"]');
    await system.waitFor({ state: "visible", timeout: 30_000 });
    await system.click();
    const fixed = view.locator('[data-testid="fixed-context"]');
    await fixed.locator('.fixed-group[data-group="tools"]').click();
    const codemode = fixed.locator('.fixed-item[data-part="codemode"]');
    await codemode.waitFor({ state: "visible", timeout: 10_000 });
    // every line of a part inside the item, the tokens right of the name
    const inside = await codemode.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return [...el.children]
        .filter((c) => c.getClientRects().length > 0)
        .every((c) => {
          const b = c.getBoundingClientRect();
          return b.left >= r.left - 0.5 && b.right <= r.right + 0.5;
        });
    });
    assert.ok(inside, "the part's cells stay inside it");
    const name = await boxOf(codemode.locator(".fixed-name"));
    const tokens = await boxOf(codemode.locator(".fixed-tokens"));
    assert.ok(name.x + name.width <= tokens.x, "name left of the tokens");
    await scrollIntoView(system);
    await page.waitForTimeout(400);
    await screenshot(page, "fixed-context-sidebar");
  });

  it("the gauge tooltip: one line, the total then the largest parts", async () => {
    const { page } = suite.wb;
    const gauge = statusBarItem(page, "piContext.gauge");
    await page.mouse.move(700, 500);
    await gauge.hover();
    const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Fixed part" }).first();
    await hover.waitFor({ state: "visible", timeout: 10_000 });
    let text = "";
    await waitUntil(
      async () => /Fixed part/.test((text = await hover.innerText())),
      10_000,
      "the tooltip's Fixed part row",
    );
    const line = text.split("\n").find((l) => l.includes("Fixed part"));
    assert.match(line, /Fixed part\s+2\.9k: tools 1\.4k, prompt 650, project\/AGENTS\.md 249, MCP 240, …/);
    await page.waitForTimeout(300);
    await screenshot(page, "fixed-context-tooltip", {
      clip: clipAround(page, unionBox(await boxOf(hover), await boxOf(gauge)), 6),
    });
  });
});
