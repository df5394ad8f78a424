// package.json's contributions are localisable and consistent: every %key% resolves in
// package.nls.json (and every key there is used), the welcome content and the walkthrough link to
// commands that exist, its media files exist, the webview uses only contributed theme colours, and
// l10n/bundle.l10n.json is what @vscode/l10n-dev extracts from the l10n.t calls in src/ and webview/
// (the lint rule in eslint.config.mjs makes every call one the extractor sees).
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../support/paths";

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
const pkg = JSON.parse(read("package.json"));
const nls = JSON.parse(read("package.nls.json")) as Record<string, string>;

/** Every string value in `value` with its JSON path. */
function strings(value: unknown, at = "$"): { at: string; text: string }[] {
  if (typeof value === "string") return [{ at, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${at}[${i}]`));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => strings(v, `${at}.${k}`));
  return [];
}

/** package.json with every %key% replaced, as VS Code loads it. */
function resolved(value: unknown): unknown {
  if (typeof value === "string") {
    const m = /^%(.+)%$/.exec(value);
    return m ? nls[m[1]!] : value;
  }
  if (Array.isArray(value)) return value.map(resolved);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolved(v)]));
  return value;
}

/** Folders under src/ and webview/ read recursively (relative paths). */
function files(dir: string, ext: RegExp): string[] {
  return fs
    .readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => ext.test(f))
    .map((f) => path.join(dir, f));
}

describe("package.json: localisable contributions", () => {
  it("every %key% resolves in package.nls.json, and every key there is used", () => {
    const refs = strings(pkg).filter((s) => /^%.+%$/.test(s.text));
    assert.ok(refs.length >= 90, `package.json refers to ${refs.length} keys`);
    const missing = refs.filter((r) => !(r.text.slice(1, -1) in nls)).map((r) => `${r.at}: ${r.text}`);
    assert.deepEqual(missing, [], "keys package.nls.json lacks");
    const used = new Set(refs.map((r) => r.text.slice(1, -1)));
    assert.deepEqual(
      Object.keys(nls).filter((k) => !used.has(k)),
      [],
      "keys of package.nls.json that package.json does not use",
    );
    for (const [k, v] of Object.entries(nls)) assert.ok(typeof v === "string" && v.trim() !== "", `${k} is empty`);
    assert.equal(pkg.l10n, "./l10n");
  });

  it("what a user reads is localisable: titles, names, descriptions and welcome texts are %key% references", () => {
    const c = pkg.contributes;
    const literal: string[] = [];
    const check = (at: string, v: unknown) => {
      if (typeof v === "string" && !/^%.+%$/.test(v)) literal.push(`${at}: ${v}`);
    };
    check("displayName", pkg.displayName);
    check("description", pkg.description);
    for (const cmd of c.commands) {
      check(`${cmd.command}.title`, cmd.title);
      check(`${cmd.command}.category`, cmd.category);
    }
    for (const v of Object.values(c.views).flat() as { id: string; name: string }[]) check(`${v.id}.name`, v.name);
    for (const w of c.viewsWelcome) check(`viewsWelcome ${w.when}`, w.contents);
    for (const w of c.walkthroughs)
      for (const s of w.steps) {
        check(`${w.id}.${s.id}.title`, s.title);
        check(`${w.id}.${s.id}.description`, s.description);
      }
    for (const col of c.colors) check(`${col.id}.description`, col.description);
    for (const [k, p] of Object.entries(c.configuration.properties) as [string, Record<string, unknown>][])
      check(`${k}.description`, p.markdownDescription ?? p.description);
    assert.deepEqual(literal, []);
  });
});

describe("package.json: welcome content, walkthrough, colours", () => {
  const c = resolved(pkg.contributes) as {
    commands: { command: string }[];
    viewsWelcome: { view: string; contents: string; when: string }[];
    walkthroughs: {
      id: string;
      steps: {
        id: string;
        title: string;
        description: string;
        media: { markdown?: string };
        completionEvents: string[];
      }[];
    }[];
    colors: { id: string; description: string; defaults: Record<string, string> }[];
  };
  const ours = new Set(c.commands.map((x) => x.command));
  /** Command links `[…](command:id…)` in a text. */
  const links = (text: string) => [...text.matchAll(/\]\(command:([\w.]+)/g)].map((m) => m[1]!);

  it("the Pi Session view explains no folder, no session and a missing bridge, with command links that exist", () => {
    const tree = c.viewsWelcome.filter((w) => w.view === "piContext.sessionTree");
    const states = ["noFolder", "noSession"];
    for (const state of states)
      assert.ok(
        tree.some((w) => w.when.includes(`piContext.sessionState == ${state}`)),
        `welcome content for ${state}`,
      );
    assert.ok(
      tree.some(
        (w) =>
          /piContext\.bridgeInstalled == false/.test(w.when) && links(w.contents).includes("piContext.installBridge"),
      ),
    );
    // the no-folder / no-session texts name the same situation as the gauge's and the Context view's
    // (viewModel/statusBar emptyStateMessage: the same first sentence), but say it for the tree (trial 5)
    const statusBar = read("src/viewModel/statusBar.ts");
    for (const w of tree.slice(0, 2)) {
      const first = w.contents.split("\n")[0]!;
      assert.ok(!statusBar.includes(JSON.stringify(first)), `"${first}" is the Context view's text too`);
      assert.match(first, /tree/, first);
      const opening = /^[^.]+\./.exec(first)![0];
      assert.ok(statusBar.includes(`"${opening} `), `"${opening}" opens emptyStateMessage's text too`);
    }
    for (const w of tree)
      for (const id of links(w.contents))
        assert.ok(ours.has(id) || id.startsWith("workbench.action."), `${id} in "${w.contents}"`);
  });

  it("the walkthrough: seven steps with their media and completion events on contributed commands", () => {
    const [walk] = c.walkthroughs;
    assert.ok(walk);
    assert.deepEqual(
      walk.steps.map((s) => s.id),
      ["gauge", "trim", "health", "summarizer", "bridge", "compact", "fork"],
    );
    const source = read("src/ui/welcome.ts");
    assert.ok(
      source.includes(`"${pkg.publisher}.${pkg.name}#${walk.id}"`),
      "piContext.getStarted opens this walkthrough",
    );
    for (const s of walk.steps) {
      assert.ok(
        s.media.markdown && fs.existsSync(path.join(REPO_ROOT, s.media.markdown)),
        `${s.id}: ${s.media.markdown}`,
      );
      assert.ok(links(s.description).length > 0, `${s.id} has a button`);
      for (const id of links(s.description)) assert.ok(ours.has(id) || id.startsWith("workbench.action."), id);
      for (const e of s.completionEvents) {
        const cmd = /^onCommand:(.+)$/.exec(e)?.[1];
        if (cmd) assert.ok(ours.has(cmd), `${s.id}: ${e}`);
        else assert.match(e, /^onSettingChanged:piContext\./);
      }
    }
    // the media ship in the .vsix (only media/demo is left out)
    assert.ok(!/^media\/walkthrough/m.test(read(".vscodeignore")));
  });

  it("the gauge levels' colours are contributed with defaults for every theme kind, and the panel uses them", () => {
    const ids = c.colors.map((x) => x.id);
    assert.deepEqual(ids, [
      "piContext.gauge.warningForeground",
      "piContext.gauge.errorForeground",
      "piContext.gauge.badgeForeground",
    ]);
    for (const col of c.colors)
      assert.deepEqual(Object.keys(col.defaults).sort(), ["dark", "highContrast", "highContrastLight", "light"]);
    const css = files("webview", /\.css$/)
      .map((f) => read(f))
      .join("\n");
    const used = new Set([...css.matchAll(/--vscode-(piContext-[\w-]+)/g)].map((m) => m[1]!.replace(/-/g, ".")));
    assert.deepEqual([...used].sort(), [...ids].sort(), "the CSS uses exactly the contributed colours");
    // the level rules read them (with VS Code's own colour as the fallback)
    assert.match(css, /\.percent\.level-warning \{\s*background: var\(--vscode-piContext-gauge-warningForeground,/);
    assert.match(css, /\.percent\.level-error \{\s*background: var\(--vscode-piContext-gauge-errorForeground,/);
  });
});

/**
 * What @vscode/l10n-dev extracts from `sources`: a function of the sources and the tool's version only,
 * so it is kept in .cache/ under their hash and redone when one changes (the tool compiles its
 * tree-sitter queries for every file: ≈ 0.1 s each, the slowest part of the unit suite).
 */
async function extractL10n(sources: { contents: string; extension: string }[]): Promise<Record<string, unknown>> {
  const hash = createHash("sha256").update(read("node_modules/@vscode/l10n-dev/package.json"));
  for (const s of sources) hash.update(`\0${s.extension}\0${s.contents}`);
  const key = hash.digest("hex");
  const cache = path.join(REPO_ROOT, ".cache", "l10n-extract.json");
  try {
    const cached = JSON.parse(fs.readFileSync(cache, "utf8"));
    if (cached.key === key) return cached.strings;
  } catch {}
  const { getL10nJson } = await import("@vscode/l10n-dev");
  const strings = await getL10nJson(sources);
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  fs.writeFileSync(`${cache}.${process.pid}`, JSON.stringify({ key, strings }));
  fs.renameSync(`${cache}.${process.pid}`, cache);
  return strings;
}

describe("l10n/bundle.l10n.json", () => {
  it("holds exactly the strings of the l10n.t / vscode.l10n.t calls in src/ and webview/ (npm run l10n)", async () => {
    const sources = [...files("src", /\.ts$/), ...files("webview", /\.ts$/)].map((f) => ({
      contents: read(f),
      extension: ".ts",
    }));
    const extracted = await extractL10n(sources);
    const bundle = JSON.parse(read("l10n/bundle.l10n.json"));
    assert.ok(Object.keys(extracted).length >= 40, `${Object.keys(extracted).length} strings`);
    assert.deepEqual(bundle, extracted, "run `npm run l10n` after changing a vscode.l10n.t string");
  });
});
