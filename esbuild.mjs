// One build script for everything we ship: the extension host bundle, the CLI and the panel webview.
// Usage: node esbuild.mjs [--watch] [--production]
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const production = process.argv.includes("--production");

// jsonc-parser's `main` is a UMD build whose dynamic `require`s esbuild cannot follow: bundle its ESM build.
const alias = { "jsonc-parser": "jsonc-parser/lib/esm/main.js" };

// Rarely needed parts are files beside the bundles, loaded on first use, so that loading the extension
// does not parse them: js-tiktoken's ranks (fit.ts), acorn (bundleCatalog.ts).
const external = ["js-tiktoken/ranks/o200k_base", "acorn"];

/**
 * pi's catalog snapshot (`src/core/data/model-catalog.json`, ≈ 300 kB) is read from a file beside the
 * bundle with `JSON.parse` instead of being bundled as a JavaScript literal (`catalog.ts` imports it).
 */
const catalogBeside = {
  name: "catalog-beside",
  setup(build) {
    build.onLoad({ filter: /[\\/]model-catalog\.json$/ }, async (args) => {
      const { copyFile, mkdir } = await import("node:fs/promises");
      await mkdir("dist", { recursive: true });
      await copyFile(args.path, "dist/model-catalog.json");
      return {
        contents:
          'module.exports = JSON.parse(require("fs").readFileSync(require("path").join(__dirname, "model-catalog.json"), "utf8"));',
        loader: "js",
      };
    });
  },
};

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode", ...external],
    plugins: [catalogBeside],
    alias,
    sourcemap: production ? false : "linked",
    minify: production,
    logLevel: "warning",
  },
  {
    entryPoints: ["src/cli/main.ts"],
    outfile: "dist/cli.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    external,
    plugins: [catalogBeside],
    alias,
    sourcemap: production ? false : "linked",
    minify: production,
    logLevel: "warning",
  },
  // What the two bundles above load on first use (fit.ts RANKS_FILE, bundleCatalog.ts ACORN_FILE).
  {
    entryPoints: {
      "tiktoken-o200k_base": "node_modules/js-tiktoken/dist/ranks/o200k_base.cjs",
      acorn: "node_modules/acorn/dist/acorn.js",
    },
    outdir: "dist",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    sourcemap: false,
    minify: production,
    logLevel: "warning",
  },
  // The live bridge: a pi extension (ESM) that "Pi: Install Live Bridge" copies into pi's
  // `<agentDir>/extensions/`. pi provides `@earendil-works/pi-coding-agent` to its extensions.
  // Never minified: users can read what runs inside their pi.
  {
    entryPoints: ["src/bridge/piExtension.ts"],
    outfile: "dist/bridge/pi-context-bridge.js",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@earendil-works/pi-coding-agent"],
    banner: {
      js: "// pi-context live bridge: a pi extension installed by the pi-context VS Code extension (Pi: Install Live Bridge). Source: src/bridge/ of pi-context.",
    },
    sourcemap: false,
    minify: false,
    logLevel: "warning",
  },
  // The Pi Context panel webview (browser; no node: modules): script, its stylesheet, and the
  // codicon font stylesheet `<vscode-icon>` needs (copied with its .ttf, served from the extension).
  {
    entryPoints: {
      main: "webview/main.ts",
      panel: "webview/panel.css",
      codicon: "node_modules/@vscode/codicons/dist/codicon.css",
    },
    outdir: "dist/webview",
    bundle: true,
    platform: "browser",
    format: "esm",
    target: ["chrome120"],
    loader: { ".ttf": "file" },
    assetNames: "[name]",
    sourcemap: production ? false : "linked",
    minify: production,
    logLevel: "warning",
  },
];

if (watch) {
  for (const options of builds) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  }
  console.log("esbuild: watching");
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
