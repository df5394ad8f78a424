#!/usr/bin/env node
// Render the extension's marketplace icon (media/icon.png, 128×128) from the activity-bar glyph
// media/pi-context.svg: the same paths, light strokes on a dark rounded square, the needle in an
// accent colour. Uses Debian's Chromium through playwright-core (scripts/browser.mjs).
//   node scripts/render-icon.mjs [--out media/icon.png] [--size 128]
import { readFileSync } from "node:fs";
import path from "node:path";
import { launchChromium } from "./browser.mjs";
import { repoRoot } from "./vscode-host.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const out = path.resolve(opt("--out", path.join(repoRoot, "media", "icon.png")));
const size = Number(opt("--size", "128"));

const svg = readFileSync(path.join(repoRoot, "media", "pi-context.svg"), "utf8");
const inner = svg.replace(/^[\s\S]*?<svg[^>]*>/, "").replace(/<\/svg>\s*$/, "");
// the needle (second path) and its hub get the accent colour
const glyph = inner
  .replace('<path d="M12 16.5l4.2-5.2"/>', '<path d="M12 16.5l4.2-5.2" stroke="#ffb547"/>')
  .replace('fill="currentColor"', 'fill="#ffb547"');
const html = `<!doctype html><html><body style="margin:0;background:transparent">
<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 128 128">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#2f4468"/>
      <stop offset="1" stop-color="#172235"/>
    </linearGradient>
  </defs>
  <rect x="4" y="4" width="120" height="120" rx="26" fill="url(#bg)"/>
  <g transform="translate(64 66) scale(4.1) translate(-12 -13.5)" fill="none" stroke="#e8eef8" stroke-width="1.7" stroke-linecap="round" stroke-linejoin="round">
    ${glyph}
  </g>
</svg></body></html>`;

const browser = await launchChromium();
try {
  const page = await (
    await browser.newContext({ viewport: { width: size, height: size }, deviceScaleFactor: 1 })
  ).newPage();
  await page.setContent(html);
  await page.screenshot({ path: out, omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
  console.log(`[render-icon] ${path.relative(repoRoot, out)} (${size}×${size})`);
} finally {
  await browser.close();
}
