// E2E: the panel's breakdown with a 60 MB tool result (one 60 MB line): the numbers get long
// (≈15,000,000 tokens, ≈11,700 % of the window) and no column may run into the next one — every
// cell stays inside its row and beside, not over, its neighbours. Screenshot in
// test-results/e2e/breakdown-long-line.png.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  closeSharedHost,
  openWorkbench,
  runCommand,
  screenshot,
  sessionDirFor,
  sharedHost,
  waitUntil,
  webviewFrameByTitle,
  scrollIntoView,
} from "./harness.mjs";

const line = (o) => `${JSON.stringify(o)}\n`;

function writeLongSession(dir, cwd) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "2026-12-01T10-00-00-000Z_long-line.jsonl");
  const ts = new Date().toISOString();
  const usage = (input) => ({
    input,
    output: 20,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: input + 20,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  writeFileSync(
    file,
    line({ type: "session", version: 3, id: "long-line", timestamp: ts, cwd }) +
      line({
        type: "message",
        id: "ll000001",
        parentId: null,
        timestamp: ts,
        message: { role: "user", content: "Read the big log", timestamp: Date.now() },
      }) +
      line({
        type: "message",
        id: "ll000002",
        parentId: "ll000001",
        timestamp: ts,
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: "call_big", name: "read", arguments: { path: "big.log" } }],
          api: "openai-completions",
          provider: "openai",
          model: "gpt-4o-mini",
          usage: usage(2400),
          stopReason: "toolUse",
          timestamp: Date.now(),
        },
      }) +
      // after the last usage: pi's headline adds its estimate (chars / 4 ≈ 15,000,000 tokens)
      line({
        type: "message",
        id: "ll000003",
        parentId: "ll000002",
        timestamp: ts,
        message: {
          role: "toolResult",
          toolCallId: "call_big",
          toolName: "read",
          content: [{ type: "text", text: "0123456789".repeat(6_000_000) }],
          isError: false,
          timestamp: Date.now(),
        },
      }),
  );
  return file;
}

describe("e2e breakdown with a 60 MB line", () => {
  let wb;

  before(async () => {
    const host = await sharedHost();
    writeLongSession(sessionDirFor(host.agentDir, host.workspace), host.workspace);
    wb = await openWorkbench();
  });

  after(async () => {
    await wb?.close();
    await closeSharedHost();
  });

  it("long numbers stay in their columns (categories and largest entries)", async () => {
    const { page } = wb;
    await runCommand(page, "Pi Context: Open Context Panel");
    const frame = await webviewFrameByTitle(page, "Pi Context", 60_000);
    const results = frame.locator('[data-testid="breakdown"] [data-category="toolResults"]');
    await results.waitFor({ state: "visible", timeout: 60_000 });
    await waitUntil(async () => Number(await results.getAttribute("data-tokens")) > 10_000_000, 30_000, "15M tokens");
    await results.click();
    const entry = frame.locator(".cat-entries .entry-line").first();
    await entry.waitFor({ state: "visible", timeout: 10_000 });
    await scrollIntoView(results);
    await screenshot(page, "breakdown-long-line");

    // every cell inside its row, each one left of the next (no overlap)
    const overlaps = await frame.locator('[data-testid="breakdown"]').evaluate((root) => {
      const problems = [];
      const rows = [
        ...root.querySelectorAll(".cat-row"),
        ...root.querySelectorAll(".entry-row"),
        ...root.querySelectorAll(".entry-line"),
      ];
      for (const row of rows) {
        const r = row.getBoundingClientRect();
        const cells = [...row.children].filter((c) => c.getClientRects().length > 0);
        let previousRight = -Infinity;
        let previousText = "";
        for (const c of cells) {
          const b = c.getBoundingClientRect();
          const text = c.textContent ?? "";
          // a cell's content may not be wider than the cell (it would paint over the next one)
          if (c.scrollWidth > c.clientWidth + 1 && getComputedStyle(c).textOverflow !== "ellipsis")
            problems.push(`${row.className}: "${text}" overflows its cell (${c.scrollWidth} > ${c.clientWidth})`);
          if (b.left < previousRight - 0.5) problems.push(`${row.className}: "${text}" overlaps "${previousText}"`);
          if (b.right > r.right + 0.5) problems.push(`${row.className}: "${text}" leaves its row`);
          previousRight = b.right;
          previousText = text;
        }
      }
      return problems;
    });
    assert.deepEqual(overlaps, []);
    const tokens = await frame.locator(".cat-entries .entry-tokens").first().innerText();
    assert.match(tokens, /^1[45],\d{3},\d{3}$/);
  });
});
