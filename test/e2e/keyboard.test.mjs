// E2E: the context panel from the keyboard. Tab walks every interactive element in document order,
// each one shows that it has the focus (an outline or a ring, also inside vscode-elements' shadow
// DOM), and no Tab stop is something that cannot be seen (the page body, a scroll box without a
// ring). Dark and light themes; screenshots of focused elements in test-results/keyboard/.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  closeSharedHost,
  encodeSessionDirName,
  openWorkbench,
  repoRoot,
  runCommand,
  waitUntil,
  webviewFrame,
} from "./harness.mjs";

const FIXTURE = path.join(repoRoot, "test", "fixtures", "pi-1.6.0");
const SHOTS = path.join(repoRoot, "test-results", "keyboard");

function setup() {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-context-e2e-keys-"));
  const workspace = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "src", "alpha.ts"), "export const alpha = 1;\n");
  mkdirSync(agentDir, { recursive: true });
  for (const f of readdirSync(path.join(FIXTURE, "long.agent")))
    copyFileSync(path.join(FIXTURE, "long.agent", f), path.join(agentDir, f));
  const text = readFileSync(path.join(FIXTURE, "long.jsonl"), "utf8");
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl));
  header.cwd = workspace;
  const dir = path.join(agentDir, "sessions", encodeSessionDirName(workspace));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "2026-11-30T06-33-33-295Z_keys.jsonl"), JSON.stringify(header) + text.slice(nl));
  return { root, workspace, agentDir };
}

function writeSettings(workspace, agentDir, theme) {
  writeFileSync(
    path.join(workspace, ".vscode", "settings.json"),
    JSON.stringify({ "piContext.agentDir": agentDir, "workbench.colorTheme": theme }, null, 2),
  );
}

/**
 * What has the focus in the panel document, and whether it shows it: the deepest active element
 * (through shadow roots), its description, and its focus indicator (outline or box-shadow on it or
 * its shadow host).
 */
function focusProbe() {
  let el = document.activeElement;
  const chain = [];
  while (el) {
    chain.push(el);
    if (el.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    else break;
  }
  // the theme's focus colour as the browser writes colours (rgb…)
  const probe = document.createElement("span");
  probe.style.color = getComputedStyle(document.documentElement).getPropertyValue("--vscode-focusBorder").trim();
  document.body.appendChild(probe);
  const focusColor = getComputedStyle(probe).color;
  probe.remove();
  const shows = (e) => {
    const cs = getComputedStyle(e);
    const outline = cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0;
    const ring = cs.boxShadow && cs.boxShadow !== "none";
    // vscode-elements mark focus with a focusBorder-coloured border
    const border = ["Top", "Right", "Bottom", "Left"].some(
      (side) =>
        cs[`border${side}Style`] !== "none" &&
        parseFloat(cs[`border${side}Width`]) > 0 &&
        cs[`border${side}Color`] === focusColor,
    );
    return outline || !!ring || border;
  };
  const describe = (e) =>
    `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className && typeof e.className === "string" ? `.${e.className.trim().split(/\s+/).join(".")}` : ""}${e.getAttribute?.("aria-label") ? `[${e.getAttribute("aria-label")}]` : ""}${e.textContent ? ` "${e.textContent.trim().slice(0, 30)}"` : ""}`;
  const r = (chain[0] ?? document.body).getBoundingClientRect();
  // the focused element and its ancestors up to the light-DOM element that holds the focus
  // (through shadow roots: a vscode-element draws its ring on an inner wrapper)
  const ancestors = [];
  for (let e = chain[chain.length - 1]; e && e !== chain[0]?.parentElement;) {
    ancestors.push(e);
    e = e.parentElement ?? e.getRootNode()?.host;
  }
  return {
    what: chain.map(describe).join(" > "),
    body: !chain[0] || chain[0] === document.body || chain[0] === document.documentElement,
    visible: ancestors.some(shows),
    top: r.top + window.scrollY,
    key: chain[0]?.getAttribute?.("data-key") ?? null,
  };
}

describe("e2e panel keyboard", () => {
  let fx;
  let wb;

  before(async () => {
    fx = setup();
    writeSettings(fx.workspace, fx.agentDir, "Default Dark Modern");
    wb = await openWorkbench({ folder: fx.workspace, width: 1400, height: 1000 });
  });

  after(async () => {
    await wb?.close();
    await closeSharedHost();
    if (fx) rmSync(fx.root, { recursive: true, force: true });
  });

  for (const theme of ["Default Dark Modern", "Default Light Modern"]) {
    const tag = theme.includes("Light") ? "light" : "dark";
    it(`Tab reaches every interactive element in order, each shows its focus, never the bare body (${tag})`, async () => {
      const { page } = wb;
      writeSettings(fx.workspace, fx.agentDir, theme);
      await waitUntil(
        async () =>
          (await page.locator(tag === "light" ? ".monaco-workbench.vs" : ".monaco-workbench.vs-dark").count()) > 0,
        20_000,
        `the ${tag} theme`,
      );
      await runCommand(page, "Pi: Open Context Panel");
      const frame = webviewFrame(page, { title: "pi Context" });
      await frame.locator('[data-testid="gauge-used"]').waitFor({ state: "visible", timeout: 30_000 });
      await frame.locator(".file").first().waitFor({ state: "visible", timeout: 20_000 });
      // every interactive element of the document, in tab order (what Tab must reach)
      const expected = await frame.locator("body").evaluate(() => {
        const all = [
          ...document.querySelectorAll(
            "button, a[href], input, select, textarea, [tabindex], vscode-button, vscode-textfield, vscode-checkbox, details > summary",
          ),
        ];
        return all.filter((e) => e.tabIndex >= 0 && !e.closest("[hidden]") && e.getClientRects().length > 0).length;
      });
      const probe = frame.locator("body");
      // start at the top of the panel document: a click on its heading (not interactive)
      await frame.locator(".session-name").first().click();
      const seen = [];
      let wrapped = false;
      let shots = 0;
      mkdirSync(SHOTS, { recursive: true });
      for (let i = 0; i < 400; i++) {
        await page.keyboard.press("Tab");
        const f = await probe.evaluate(focusProbe);
        // never the bare body of the panel, nor out of the panel onto the workbench's body
        assert.ok(!f.body, `Tab ${i + 1} landed on the page body with no visible focus (after ${seen.at(-1)?.what})`);
        assert.ok(f.visible, `Tab ${i + 1}: ${f.what} has the focus but does not show it`);
        if (seen.length > 0 && f.what === seen[0].what && f.top === seen[0].top) {
          wrapped = true; // back at the first stop: Tab cycles within the panel
          break;
        }
        seen.push(f);
        if (shots < 6 && (i % 7 === 0 || /file|summary|diff/.test(f.what))) {
          shots++;
          await page.screenshot({ path: path.join(SHOTS, `focus-${tag}-${String(i + 1).padStart(2, "0")}.png`) });
        }
      }
      // in document order: top to bottom (a listbox or a toolbar counts once)
      for (let i = 1; i < seen.length; i++)
        assert.ok(seen[i].top >= seen[i - 1].top - 1, `out of order: ${seen[i - 1].what} → ${seen[i].what}`);
      assert.ok(seen.length >= Math.min(expected, 10), `reached ${seen.length} of ${expected} interactive elements`);
      console.log(`[keyboard ${tag}] ${seen.length} Tab stops, ${expected} interactive elements`);
      if (process.env.PI_CONTEXT_E2E_VERBOSE === "1") for (const f of seen) console.log(`  ${f.what}`);
      assert.ok(wrapped, "after the last element Tab comes back to the first one (not the page body)");
      // and Shift+Tab from the first goes to the last
      await page.keyboard.press("Shift+Tab");
      const back = await probe.evaluate(focusProbe);
      assert.equal(back.what, seen.at(-1).what, "Shift+Tab from the first element: the last one");
    });
  }
});
