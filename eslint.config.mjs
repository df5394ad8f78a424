// Lint: typescript-eslint's recommended rules, the layer rules of docs/architecture.md (what may
// import what) and a size limit per source file. `npm run lint` also runs Prettier (--check) and
// dependency-cruiser (no import cycles, .dependency-cruiser.cjs).
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// ── Layers (docs/architecture.md) ───────────────────────────────────────────────────────────────
// The VS Code surfaces: one folder each; they meet only through src/services.ts.
const ADAPTERS = [
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
// Files inside adapter folders that must stay free of `vscode` (used by the CLI or by plain-Node tests).
const PURE_ADAPTER_FILES = [
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
const up = (depth) => (depth === 0 ? "^\\./" : `^(\\.\\./){${depth}}`);
const noVscode = (where) => ({
  name: "vscode",
  message: `layer rule (docs/architecture.md): ${where} must not import vscode.`,
});
const noNode = (where) => [
  { regex: "^node:", message: `layer rule (docs/architecture.md): ${where} is browser-safe: no node: modules.` },
  {
    regex: `^(${builtinModules.filter((m) => !m.startsWith("_")).join("|")})(/.*)?$`,
    message: `layer rule (docs/architecture.md): ${where} is browser-safe: no Node built-in modules.`,
  },
];
/** A layer: its files may import only what `allowed` (folders of src/, relative to src/) names. */
function layer({ files, ignores, where, vscode = true, node = true, allowed, depth, extra = [] }) {
  const patterns = [...extra];
  if (allowed) {
    patterns.push({
      regex: `${up(depth)}(?!(${allowed.join("|")})(/|$))`,
      message: `layer rule (docs/architecture.md): ${where} may import only ${allowed.join(", ")} from src/.`,
    });
  }
  if (!node) patterns.push(...noNode(where));
  return {
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      "no-restricted-imports": ["error", { paths: vscode ? [] : [noVscode(where)], patterns }],
    },
  };
}
const layers = [];
// src/core: pure pi rules (nothing from outside src/core but the browser-safe src/shared, no vscode). One entry per folder depth.
for (const depth of [1, 2, 3]) {
  layers.push(
    layer({
      files: [`src/core/${"*/".repeat(depth - 1)}*.ts`],
      where: "src/core",
      vscode: false,
      allowed: ["core", "shared"],
      depth,
    }),
  );
}
layers.push(
  layer({ files: ["src/shared/*.ts"], where: "src/shared", vscode: false, node: false, allowed: ["shared"], depth: 1 }),
  layer({
    files: ["src/viewModel/*.ts"],
    where: "src/viewModel",
    vscode: false,
    allowed: ["core", "shared", "viewModel"],
    depth: 1,
  }),
  layer({
    files: ["src/bridge/*.ts"],
    where: "src/bridge (runs inside pi)",
    vscode: false,
    allowed: ["bridge"],
    depth: 1,
  }),
  layer({
    files: ["src/cli/*.ts"],
    where: "src/cli",
    vscode: false,
    // the CLI is a live bridge client too: the vscode-free client and the announcements' reader
    allowed: [
      "core",
      "shared",
      "viewModel",
      "cli",
      "summarizers/openai",
      "liveBridge/client",
      "liveBridge/announced",
      "bridge/protocol",
    ],
    depth: 1,
  }),
  layer({
    files: ["src/ui/*.ts"],
    where: "src/ui",
    allowed: ["core", "shared", "viewModel", "ui", "services", "config"],
    depth: 1,
  }),
  layer({
    files: ["src/services.ts", "src/config.ts"],
    where: "src/services.ts and src/config.ts (contracts)",
    allowed: ["core", "shared", "viewModel", "services", "config"],
    depth: 0,
  }),
  {
    files: ["webview/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [noVscode("webview/")],
          patterns: [
            ...noNode("webview/"),
            {
              regex: "(^|/)src/(?!shared/)",
              message: "layer rule (docs/architecture.md): webview/ may import only src/shared/ from src/.",
            },
          ],
        },
      ],
    },
  },
);
for (const folder of ADAPTERS) {
  const allowed = [
    "core",
    "shared",
    "viewModel",
    "ui",
    "services",
    "config",
    folder,
    ...(folder === "liveBridge" ? ["bridge"] : []),
  ];
  const pure = PURE_ADAPTER_FILES.filter((f) => f.startsWith(`src/${folder}/`));
  layers.push(
    layer({
      files: [`src/${folder}/*.ts`],
      ignores: pure,
      where: `src/${folder}/ (a VS Code surface)`,
      allowed,
      depth: 1,
    }),
  );
  if (pure.length) {
    layers.push(
      layer({
        files: pure,
        where: pure.join(", "),
        vscode: false,
        allowed: allowed.filter((a) => a !== "ui" && a !== "services" && a !== "config"),
        depth: 1,
      }),
    );
  }
}

// Localisation: what every l10n.t call must look like (see the rules below).
const L10N_CALLS = [
  {
    selector: "CallExpression[callee.property.name='t'][callee.object.name='l10n']:not([arguments.0.type='Literal'])",
    message: "localisation (docs/localisation.md): l10n.t takes its English text as a string literal.",
  },
  {
    selector:
      "CallExpression[callee.property.name='t'][callee.object.property.name='l10n']:not([arguments.0.type='Literal'])",
    message: "localisation (docs/localisation.md): vscode.l10n.t takes its English text as a string literal.",
  },
  {
    selector: "MemberExpression[property.name='t'][object.name='l10n']:not(CallExpression > .callee)",
    message: "localisation (docs/localisation.md): call l10n.t(...) directly (an alias is not extracted).",
  },
  {
    selector: "MemberExpression[property.name='t'][object.property.name='l10n']:not(CallExpression > .callee)",
    message: "localisation (docs/localisation.md): call vscode.l10n.t(...) directly (an alias is not extracted).",
  },
];

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "out/",
      "dist/",
      "test-results/",
      "test/vscode-host/",
      "test/conformance/oracle/node_modules/",
      "test/fixtures/",
      "media/demo/",
      "bench-data/",
      ".vscode-test/",
      "**/*.vsix",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: {
        console: "readonly",
        process: "readonly",
        Buffer: "readonly",
        __dirname: "readonly",
        require: "readonly",
        module: "writable",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        performance: "readonly",
        URL: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        TextDecoder: "readonly",
        TextEncoder: "readonly",
        fetch: "readonly",
        window: "readonly",
        document: "readonly",
        navigator: "readonly",
        HTMLElement: "readonly",
        customElements: "readonly",
        acquireVsCodeApi: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
        getComputedStyle: "readonly",
        URLSearchParams: "readonly",
        MessageEvent: "readonly",
        KeyboardEvent: "readonly",
        Event: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/no-require-imports": "off",
      "no-control-regex": "off",
      // ESLint 10 additions that flag defensive initialisations and re-thrown messages; not worth the churn.
      "no-useless-assignment": "off",
      "preserve-caught-error": "off",
      "no-empty": ["error", { allowEmptyCatch: true }],
    },
  },
  ...layers,
  // Localisation (docs/localisation.md): every l10n.t / vscode.l10n.t call names its English text as a
  // string literal, so `npm run l10n` (@vscode/l10n-dev) extracts every string into l10n/bundle.l10n.json
  // (test/unit/manifest.test.ts checks the bundle is current); an alias (`const t = l10n.t`) or a
  // computed text would be used at run time but never reach the bundle, so translators would not see it.
  { files: ["src/**/*.ts", "webview/**/*.ts"], rules: { "no-restricted-syntax": ["error", ...L10N_CALLS] } },
  // Texts that are pi's own words, go to the model or into the session file stay English for every
  // user: the live bridge (runs inside pi), the prompts, the serialised conversation, the entries pi's
  // rules build. No @vscode/l10n there.
  {
    files: [
      "src/bridge/**/*.ts",
      "src/core/flows/prompts.ts",
      "src/core/rules/serialize.ts",
      "src/core/rules/branch.ts",
      "src/core/rules/compaction.ts",
      "src/core/rules/spanSummary.ts",
    ],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...L10N_CALLS,
        {
          selector: "ImportDeclaration[source.value='@vscode/l10n']",
          message:
            "localisation (docs/localisation.md): this file's texts are pi's words, the model's input or session entries: they stay English.",
        },
      ],
    },
  },
  // Files small enough to read: over 600 lines only with a reason at the top
  // (`/* eslint max-lines: ["error", N] -- why */`).
  { files: ["src/**/*.ts", "webview/**/*.ts"], rules: { "max-lines": ["error", { max: 600 }] } },
  {
    files: ["**/*.mjs", "**/*.js"],
    rules: { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
);
