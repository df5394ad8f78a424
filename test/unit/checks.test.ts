/**
 * The checks of `npm run check` cannot be fooled: each rule is shown a planted violation and must
 * refuse it — the layer rules (.dependency-cruiser.cjs) at any folder depth, the webview type check,
 * the function and file size limits and the localisation rule (eslint.config.mjs). Planted files live
 * in a temporary copy of the layout or in memory, never in the working tree (other tests list it).
 */

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import * as ts from "typescript";
import { ESLint, type Rule } from "eslint";
import { builtinRules } from "eslint/use-at-your-own-risk";
import { REPO_ROOT } from "../support/paths";

const scripts = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).scripts as Record<
  string,
  string
>;

/** The commands `npm run <name>` runs, with every nested `npm run` expanded. */
function commands(name: string): string[] {
  const script = scripts[name];
  assert.ok(script, `no npm script ${name}`);
  return script.split("&&").flatMap((part) => {
    const nested = /^npm run ([\w:-]+)$/.exec(part.trim());
    return nested ? commands(nested[1]!) : [part.trim()];
  });
}
/** The TypeScript projects (`tsc -p <config>`) that `npm run <name>` compiles. */
const projectsOf = (name: string) =>
  commands(name).flatMap((c) => [...c.matchAll(/\btsc -p (\S+)/g)].map((m) => m[1]!));

describe("npm run check", () => {
  it("runs ESLint, Prettier, dependency-cruiser, both TypeScript projects and the unit tests", () => {
    const run = commands("check");
    assert.ok(
      run.some((c) => /^eslint \. /.test(c)),
      run.join("\n"),
    );
    assert.ok(run.some((c) => /^prettier --check \. /.test(c)));
    assert.ok(run.some((c) => /^depcruise src webview --config \.dependency-cruiser\.cjs /.test(c)));
    assert.ok(run.includes("node scripts/node-test.mjs out/test/unit"));
    assert.deepEqual(projectsOf("check").sort(), ["tsconfig.json", "webview/tsconfig.json"]);
  });
});

// ── Type checking ────────────────────────────────────────────────────────────────────────────────

function project(config: string): ts.ParsedCommandLine {
  const file = path.join(REPO_ROOT, config);
  const parsed = ts.getParsedCommandLineOfConfigFile(
    file,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    },
  );
  assert.ok(parsed, config);
  return parsed;
}

/** The .ts files under `dir` (node_modules and symbolic links skipped). */
function tsFiles(dir: string): string[] {
  return fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== "node_modules") return tsFiles(rel);
    return e.isFile() && e.name.endsWith(".ts") ? [path.join(REPO_ROOT, rel)] : [];
  });
}

describe("type checking", () => {
  for (const script of ["typecheck", "check"])
    it(`every TypeScript file of src/, webview/ and test/ is in a project that npm run ${script} compiles`, () => {
      const checked = new Set(projectsOf(script).flatMap((p) => project(p).fileNames));
      const files = [...tsFiles("src"), ...tsFiles("webview"), ...tsFiles("test")];
      assert.ok(files.some((f) => f.endsWith(path.join("webview", "sections", "usage.ts"))));
      assert.deepEqual(
        files.filter((f) => !checked.has(path.normalize(f))).map((f) => path.relative(REPO_ROOT, f)),
        [],
      );
    });

  it("a planted type error in webview/sections/usage.ts fails the webview project (DOM lib, strict)", () => {
    const { fileNames, options } = project("webview/tsconfig.json");
    const usage = path.join(REPO_ROOT, "webview", "sections", "usage.ts");
    const host = ts.createCompilerHost(options);
    const program = ts.createProgram(fileNames, options, host);
    const errors = (p: ts.Program) =>
      p
        .getSemanticDiagnostics(p.getSourceFile(usage))
        .map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    assert.deepEqual(errors(program), [], "the file as it is checks clean");

    const readFile = host.readFile.bind(host);
    const planted = `${fs.readFileSync(usage, "utf8")}\nexport const planted: HTMLElement = "not an element";\n`;
    host.readFile = (f) => (path.resolve(f) === usage ? planted : readFile(f));
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (f, lang, ...rest) =>
      path.resolve(f) === usage ? ts.createSourceFile(f, planted, lang) : getSourceFile(f, lang, ...rest);
    assert.deepEqual(errors(ts.createProgram(fileNames, options, host, program)), [
      "TS2322: Type 'string' is not assignable to type 'HTMLElement'.",
    ]);
  });
});

// ── Layer rules (dependency-cruiser) ──────────────────────────────────────────────────────────────

type Layer = { name: string; files: string[]; except?: string[]; may: string[]; vscode?: boolean; node?: boolean };
const depcruiseConfig = path.join(REPO_ROOT, ".dependency-cruiser.cjs");
const LAYERS = (require(depcruiseConfig) as { LAYERS: Layer[] }).LAYERS;

type Violation = { from: string; to: string; rule: { name: string } };
type Cruise = { violations: Violation[]; comments: Map<string, string> };

/** `depcruise src webview` with our configuration, as `npm run lint` runs it, in `root`. */
function cruise(root: string): Cruise {
  const bin = path.join(REPO_ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
  const run = spawnSync(
    process.execPath,
    [bin, "src", "webview", "--config", depcruiseConfig, "--output-type", "json"],
    {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  assert.ok(run.stdout, run.stderr);
  const summary = JSON.parse(run.stdout).summary;
  const rules = summary.ruleSetUsed.forbidden as { name: string; comment: string }[];
  const comments = new Map(rules.map((r) => [r.name, r.comment]));
  return { violations: summary.violations.filter((v: Violation) => v.rule.name !== "no-circular"), comments };
}

/** A temporary tree with `files` (path → content), tsconfig.json and a link to our node_modules. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-layers-"));
  fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
  fs.copyFileSync(path.join(REPO_ROOT, "tsconfig.json"), path.join(root, "tsconfig.json"));
  fs.mkdirSync(path.join(root, "webview"));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

/**
 * The plants: one module per top-level folder and contract of src/ (one folder below it) as targets;
 * for each layer, a file at depth 1 and one at depth 3 of its folder (or its file) importing every
 * target — by `import`, `import type`, `require` or `import()` in turn — plus `vscode`, `node:fs` and
 * `os`. Returns the files and the violations the layer table implies.
 */
function plants(): { files: Record<string, string>; expected: string[] } {
  const folders = [
    ...new Set(
      LAYERS.flatMap((l) => l.files)
        .filter((f) => f.startsWith("src/"))
        .map((f) => f.split("/")[1]!.replace(/\.ts$/, "")),
    ),
  ];
  const targets: Record<string, string> = Object.fromEntries(
    folders.map((f) => [
      f,
      LAYERS.some((l) => l.files.includes(`src/${f}.ts`)) ? `src/${f}.ts` : `src/${f}/deep/target.ts`,
    ]),
  );
  targets.extension = "src/extension.ts";
  targets["summarizers/openai"] = "src/summarizers/openai.ts";
  const files: Record<string, string> = Object.fromEntries(
    Object.values(targets).map((t) => [t, "export const t = 1;\n"]),
  );
  const forms = [
    (spec: string, i: number) => `import { t as t${i} } from "${spec}";\nexport { t${i} };\n`,
    (spec: string, i: number) => `import type { t as t${i} } from "${spec}";\nexport type T${i} = typeof t${i};\n`,
    (spec: string) => `require("${spec}");\n`,
    (spec: string) => `void import("${spec}");\n`,
  ];
  const expected: string[] = [];
  const plant = (layer: Layer, file: string) => {
    let text = 'import * as vscode from "vscode";\nimport * as fs from "node:fs";\nimport * as os from "os";\n';
    text += "export const platform = [vscode, fs, os];\n";
    if (layer.vscode === false) expected.push(`${file} → vscode: layer: ${layer.name}, no vscode`);
    if (layer.node === false)
      expected.push(`${file} → node:fs: layer: ${layer.name}, no Node`, `${file} → os: layer: ${layer.name}, no Node`);
    Object.entries(targets).forEach(([name, target], i) => {
      if (target === file) return;
      let spec = path.posix.relative(path.posix.dirname(file), target.replace(/\.ts$/, ""));
      if (!spec.startsWith(".")) spec = `./${spec}`;
      text += forms[i % forms.length]!(spec, i);
      if (!layer.may.some((m) => name === m || name.startsWith(`${m}/`)))
        expected.push(`${file} → ${target}: layer: ${layer.name}`);
    });
    files[file] = text;
  };
  for (const layer of LAYERS)
    for (const f of layer.files) {
      if (!f.endsWith("/")) plant(layer, f);
      else for (const at of ["", "a/b/"]) plant(layer, `${f}${at}planted.ts`);
    }
  return { files, expected };
}

describe("layer rules (docs/architecture.md, .dependency-cruiser.cjs)", () => {
  let root: string;
  let result: Cruise;
  const { files, expected } = plants();
  const ISSUE_PLANT = "src/panel/deep/x.ts";
  before(() => {
    root = tree({ ...files, [ISSUE_PLANT]: 'import { t } from "../../tree/deep/target";\nexport const x = t;\n' });
    result = cruise(root);
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  /** `from → to: rule` of each violation; vscode's and Node's modules by their names. */
  const found = (from: (f: string) => boolean) =>
    result.violations
      .filter((v) => from(v.from))
      .map((v) => {
        const to = v.to.includes("node_modules/@types/vscode/") ? "vscode" : v.to === "fs" ? "node:fs" : v.to;
        return `${v.from} → ${to}: ${v.rule.name}`;
      });

  it("the issue's plant: src/panel/deep/x.ts importing ../../tree/… fails, naming the rule and the doc", () => {
    const violations = found((f) => f === ISSUE_PLANT);
    assert.deepEqual(violations, [`${ISSUE_PLANT} → src/tree/deep/target.ts: layer: panel (a VS Code surface)`]);
    assert.match(
      result.comments.get("layer: panel (a VS Code surface)")!,
      /^layer rule \(docs\/architecture\.md\): panel .* may import only /,
    );
  });

  it("every layer refuses what its row does not allow, at depth 1 and 3, for import, import type, require and import()", () => {
    assert.ok(expected.length > 300, `${expected.length} planted violations`);
    assert.deepEqual(found((f) => f !== ISSUE_PLANT).sort(), expected.sort());
  });

  it("every file and folder of src/ belongs to a layer (extension.ts, the composition root, may import all)", () => {
    const layerFiles = new Set(LAYERS.flatMap((l) => l.files));
    const missing = fs
      .readdirSync(path.join(REPO_ROOT, "src"), { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`))
      .filter((e) => e !== "src/extension.ts" && !layerFiles.has(e));
    assert.deepEqual(missing, []);
  });
});

// ── ESLint rules ─────────────────────────────────────────────────────────────────────────────────

type EslintConfigModule = {
  LONG_FUNCTIONS: { file: string; fn: string; lines: number }[];
  MAX_FUNCTION_LINES: number;
  functionName: (node: unknown) => string;
};

describe("ESLint rules (eslint.config.mjs)", () => {
  let eslint: ESLint;
  let config: EslintConfigModule;
  before(async () => {
    eslint = new ESLint({ cwd: REPO_ROOT });
    config = (await import(pathToFileURL(path.join(REPO_ROOT, "eslint.config.mjs")).href)) as EslintConfigModule;
  });

  /** The rule ids ESLint reports for `text` as if it were the file `file` (nothing is written). */
  const lint = async (file: string, text: string) => {
    const [result] = await eslint.lintText(text, { filePath: path.join(REPO_ROOT, file) });
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
  };
  const fn = (name: string, code: number, comments = 0, blanks = 0) =>
    `export function ${name}(): number {\n  let n = 0;\n${"  n += 1;\n".repeat(code - 4)}${"  // a comment\n".repeat(comments)}${"\n".repeat(blanks)}  return n;\n}\n`;

  it("a function over MAX_FUNCTION_LINES code lines fails, in any folder; blank and comment lines do not count", async () => {
    assert.equal(config.MAX_FUNCTION_LINES, 150);
    for (const file of ["src/core/rules/planted.ts", "src/panel/a/b/planted.ts", "webview/sections/deep/planted.ts"]) {
      assert.deepEqual(await lint(file, fn("planted", 150, 40, 40)), [], file);
      assert.deepEqual(await lint(file, fn("planted", 151)), [
        "local/function-size: Function 'planted' has too many lines (151). Maximum allowed is 150.",
      ]);
    }
  });

  it("an allow-listed function may not grow past its size, and another function of its file gets no allowance", async () => {
    // The list may be empty: the rule is run with a planted entry, its other options as configured.
    const entry = { file: "src/core/rules/planted.ts", fn: "planted", lines: 200 };
    const allowing = new ESLint({
      cwd: REPO_ROOT,
      overrideConfig: {
        files: ["src/**/*.ts"],
        rules: {
          "local/function-size": [
            "error",
            { max: config.MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true, allow: [entry] },
          ],
        },
      },
    });
    const lintAllowing = async (file: string, text: string) => {
      const [result] = await allowing.lintText(text, { filePath: path.join(REPO_ROOT, file) });
      return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
    };
    assert.deepEqual(await lintAllowing(entry.file, fn(entry.fn, entry.lines)), []);
    assert.deepEqual(await lintAllowing(entry.file, fn(entry.fn, entry.lines + 1)), [
      `local/function-size: Function '${entry.fn}' has too many lines (${entry.lines + 1}). Maximum allowed is ${entry.lines} (LONG_FUNCTIONS).`,
    ]);
    assert.deepEqual(await lintAllowing(entry.file, fn("another", 151)), [
      "local/function-size: Function 'another' has too many lines (151). Maximum allowed is 150.",
    ]);
    assert.deepEqual(await lintAllowing("src/core/rules/elsewhere.ts", fn(entry.fn, 151)), [
      "local/function-size: Function 'planted' has too many lines (151). Maximum allowed is 150.",
    ]);
  });

  it("every LONG_FUNCTIONS entry is still needed (the list only shrinks: remove an entry when its function is split)", async () => {
    // max-lines-per-function reporting every long function by its allow-list name and size.
    const builtin = builtinRules.get("max-lines-per-function")!;
    const sizes: Rule.RuleModule = {
      meta: builtin.meta!,
      create: (context) =>
        builtin.create(
          Object.create(context, {
            report: {
              value: (d: { node: Rule.Node; data: { lineCount: number } }) =>
                context.report({ node: d.node, message: `${config.functionName(d.node)} ${d.data.lineCount}` }),
            },
          }),
        ),
    };
    const probe = new ESLint({
      cwd: REPO_ROOT,
      overrideConfig: {
        files: ["**/*.ts"],
        plugins: { probe: { rules: { sizes } } },
        rules: {
          "probe/sizes": ["error", { max: config.MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true }],
        },
      },
    });
    const listed = [...new Set(config.LONG_FUNCTIONS.map((e) => e.file))];
    const gone = listed.filter((f) => !fs.existsSync(path.join(REPO_ROOT, f)));
    assert.deepEqual(gone, [], "LONG_FUNCTIONS names files that no longer exist");
    const long = new Set<string>();
    // lintFiles([]) would lint the whole repository
    for (const r of listed.length === 0 ? [] : await probe.lintFiles(listed.map((f) => path.join(REPO_ROOT, f))))
      for (const m of r.messages.filter((m) => m.ruleId === "probe/sizes"))
        long.add(`${path.relative(REPO_ROOT, r.filePath).split(path.sep).join("/")} ${m.message.split(" ")[0]}`);
    assert.deepEqual(
      config.LONG_FUNCTIONS.filter((e) => !long.has(`${e.file} ${e.fn}`)).map((e) => `${e.file} ${e.fn}`),
      [],
    );
  });

  it("a file over 600 code lines fails; its comments do not count", async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const c${i} = ${i};\n`).join("");
    const docs = "/**\n * a docstring line\n */\n".repeat(100);
    assert.deepEqual(await lint("src/core/a/b/planted.ts", docs + lines(600)), []);
    assert.deepEqual(await lint("src/core/a/b/planted.ts", lines(601)), [
      "max-lines: File has too many lines (601). Maximum allowed is 600.",
    ]);
  });

  it("l10n.t with a computed text fails in a sub-folder", async () => {
    const text = 'import * as l10n from "@vscode/l10n";\nconst k = "x";\nexport const s = l10n.t(k);\n';
    const messages = await lint("webview/sections/deep/planted.ts", text);
    assert.equal(messages.length, 1);
    assert.match(
      messages[0]!,
      /^no-restricted-syntax: localisation \(docs\/localisation\.md\): l10n\.t takes its English text/,
    );
  });
});
