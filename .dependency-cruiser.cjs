// `npm run lint` (depcruise step): the layer rules of docs/architecture.md (what may import what) and no
// import cycles, over resolved paths — so a rule holds at any folder depth, for `import`, `import type`,
// `export … from`, `require` and `import()` alike. LAYERS below is the one table of those rules.

// VS Code surfaces: one folder each; they meet only through src/services.ts.
const SURFACES = [
  "sessions",
  "statusBar",
  "panel",
  "tree",
  "compaction",
  "summarizers",
  "liveBridge",
  "trim",
  "health",
  "userPi",
  "access",
];
// Files of surface folders that stay free of `vscode`: the CLI and plain-Node tests use them.
const PURE_SURFACE_FILES = [
  "src/summarizers/openai.ts",
  "src/sessions/scan.ts",
  "src/sessions/picker.ts",
  "src/sessions/follow.ts",
  "src/sessions/following.ts",
  "src/sessions/signatures.ts",
  "src/liveBridge/client.ts",
  "src/liveBridge/announced.ts",
  "src/liveBridge/installFile.ts",
  "src/liveBridge/liveUsage.ts",
  "src/liveBridge/target.ts",
];
const CONTRACTS = ["services", "config"];

/**
 * The layers: `files` (a folder ending in `/`, or files) may import from `src/` only what `may` names
 * (a folder or a file of `src/`, without `.ts`); `vscode: false` forbids `vscode`, `node: false` forbids
 * Node's built-in modules (browser-safe code).
 */
const LAYERS = [
  { name: "core", files: ["src/core/"], may: ["core", "shared"], vscode: false },
  { name: "shared", files: ["src/shared/"], may: ["shared"], vscode: false, node: false },
  { name: "viewModel", files: ["src/viewModel/"], may: ["core", "shared", "viewModel"], vscode: false },
  { name: "bridge (runs inside pi)", files: ["src/bridge/"], may: ["bridge"], vscode: false },
  {
    name: "cli",
    files: ["src/cli/"],
    // the CLI is a live bridge client too: the vscode-free client, the announcements' reader and the install path
    may: [
      "core",
      "shared",
      "viewModel",
      "cli",
      "summarizers/openai",
      "liveBridge/client",
      "liveBridge/announced",
      "liveBridge/installFile",
      "bridge/protocol",
    ],
    vscode: false,
  },
  { name: "ui", files: ["src/ui/"], may: ["core", "shared", "viewModel", "ui", ...CONTRACTS] },
  { name: "contracts", files: CONTRACTS.map((c) => `src/${c}.ts`), may: ["core", "shared", "viewModel", ...CONTRACTS] },
  // the command table: what surfaces call of each other goes through it (services.actions)
  { name: "command table", files: ["src/commands.ts"], may: [...CONTRACTS] },
  ...SURFACES.flatMap((folder) => {
    const may = ["core", "shared", "viewModel", folder, ...(folder === "liveBridge" ? ["bridge"] : [])];
    const pure = PURE_SURFACE_FILES.filter((f) => f.startsWith(`src/${folder}/`));
    return [
      {
        name: `${folder} (a VS Code surface)`,
        files: [`src/${folder}/`],
        except: pure,
        may: [...may, "ui", ...CONTRACTS],
      },
      ...(pure.length ? [{ name: `${folder} (vscode-free files)`, files: pure, may, vscode: false }] : []),
    ];
  }),
  { name: "webview", files: ["webview/"], may: ["shared"], vscode: false, node: false },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A regular expression matching the paths of `files` (folders end in `/`). */
const pathsOf = (files) => `^(${files.map((f) => escape(f) + (f.endsWith("/") ? "" : "$")).join("|")})`;
// `vscode` resolves to its types (@types/vscode) or, without them, to nothing.
const VSCODE = "^vscode$|(^|/)node_modules/@types/vscode/";

const layerRules = LAYERS.flatMap(({ name, files, except = [], may, vscode = true, node = true }) => {
  const from = { path: pathsOf(files), ...(except.length ? { pathNot: pathsOf(except) } : {}) };
  const why = `layer rule (docs/architecture.md): ${name}`;
  const rules = [
    {
      name: `layer: ${name}`,
      severity: "error",
      comment: `${why} may import only ${may.join(", ")} from src/.`,
      from,
      to: { path: "^src/", pathNot: `^src/(${may.map(escape).join("|")})(/|\\.ts$)` },
    },
  ];
  if (!vscode)
    rules.push({
      name: `layer: ${name}, no vscode`,
      severity: "error",
      comment: `${why} must not import vscode.`,
      from,
      to: { path: VSCODE },
    });
  if (!node)
    rules.push({
      name: `layer: ${name}, no Node`,
      severity: "error",
      comment: `${why} is browser-safe: no node: modules or Node built-ins.`,
      from,
      to: { dependencyTypes: ["core"] },
    });
  return rules;
});

/** @type {import("dependency-cruiser").IConfiguration} */
const config = {
  forbidden: [
    ...layerRules,
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle (docs/architecture.md: no cycles). Move the shared piece down a layer.",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|out|dist)/" },
  },
};
// The table itself, for test/unit/checks.test.ts (not enumerable: not part of depcruise's configuration).
Object.defineProperty(config, "LAYERS", { value: LAYERS });
module.exports = config;
