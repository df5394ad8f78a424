// Headless Debian Chromium driven by playwright-core (never a downloaded browser).
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.PI_CONTEXT_CHROMIUM || "/usr/bin/chromium";

/** Flags that keep Chromium off the (closed) network and quiet on these machines. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-dev-shm-usage",
];

/**
 * Launch Chromium. Playwright gives it a fresh temp profile (--user-data-dir) and closes it
 * when this process exits.
 * @param {{headless?: boolean}} [opts]
 */
export async function launchChromium(opts = {}) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} not found: run \`npm run host:setup\` (installs Debian's chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: opts.headless ?? true,
    args: CHROMIUM_ARGS,
  });
}

/** A page with a fixed viewport, console messages collected into `lines` (and optionally echoed). */
export async function newWorkbenchPage(browser, { width = 1400, height = 900, echo = false, lines = [] } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.on("console", (msg) => {
    const line = `[${msg.type()}] ${msg.text()}`;
    lines.push(line);
    if (echo) console.log(`  [browser] ${line}`);
  });
  page.on("pageerror", (err) => {
    const line = `[pageerror] ${err.message}`;
    lines.push(line);
    if (echo) console.log(`  [browser] ${line}`);
  });
  return { context, page, lines };
}
