// One build script for everything we ship: the extension host bundle, the CLI and the panel webview.
// Usage: node esbuild.mjs [--watch] [--production]
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const production = process.argv.includes("--production");

// jsonc-parser's `main` is a UMD build whose dynamic `require`s esbuild cannot follow: bundle its ESM build.
const alias = { "jsonc-parser": "jsonc-parser/lib/esm/main.js" };

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    // js-tiktoken's o200k_base ranks (2.3 MB) are a separate file, loaded on first use (fit.ts).
    external: ["vscode", "js-tiktoken/ranks/o200k_base"],
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
    external: ["js-tiktoken/ranks/o200k_base"],
    alias,
    sourcemap: production ? false : "linked",
    minify: production,
    logLevel: "warning",
  },
  // The ranks the two bundles above load on first use (src/core/flows/fit.ts, RANKS_FILE).
  {
    entryPoints: { "tiktoken-o200k_base": "node_modules/js-tiktoken/dist/ranks/o200k_base.cjs" },
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
