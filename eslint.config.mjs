// Lint: typescript-eslint's recommended rules, the localisation rules and size limits per function and
// per file. `npm run lint` also runs Prettier (--check) and dependency-cruiser (.dependency-cruiser.cjs:
// the layer rules of docs/architecture.md — what may import what — and no import cycles).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import js from "@eslint/js";
import { builtinRules } from "eslint/use-at-your-own-risk";
import tseslint from "typescript-eslint";

// ── Function size ───────────────────────────────────────────────────────────────────────────────
// A function longer than this (code lines: blanks and comments skipped) does too many things: split
// it by what it decides.
export const MAX_FUNCTION_LINES = 150;
// Functions that were longer when the rule came. Each may not grow past its size here; remove its entry
// when it is split. Entries only ever go away (test/unit/checks.test.ts fails on one no longer needed).
export const LONG_FUNCTIONS = [];

/** A function's name as the allow-list spells it: its own, its variable's, or its key's. */
export function functionName(node) {
  const key = (k) => (k?.type === "Identifier" ? k.name : k?.type === "Literal" ? String(k.value) : "(computed)");
  if (node.type === "MethodDefinition" || node.type === "Property") return key(node.key);
  if (node.id) return node.id.name;
  const parent = node.parent;
  if (parent?.type === "VariableDeclarator") return key(parent.id);
  if (parent?.type === "PropertyDefinition" || parent?.type === "Property") return key(parent.key);
  return "(anonymous)";
}

// ESLint's `max-lines-per-function`, minus the reports its `allow` option (LONG_FUNCTIONS) allows.
const maxLinesPerFunction = builtinRules.get("max-lines-per-function");
const functionSize = {
  meta: {
    type: "suggestion",
    docs: { description: "max-lines-per-function with an allow-list of functions and their sizes" },
    messages: maxLinesPerFunction.meta.messages,
    schema: [
      {
        type: "object",
        properties: {
          max: { type: "integer", minimum: 0 },
          skipComments: { type: "boolean" },
          skipBlankLines: { type: "boolean" },
          allow: {
            type: "array",
            items: {
              type: "object",
              properties: { file: { type: "string" }, fn: { type: "string" }, lines: { type: "integer" } },
              required: ["file", "fn", "lines"],
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const file = context.filename.replaceAll("\\", "/");
    const allowed = (context.options[0]?.allow ?? []).filter((e) => file.endsWith(`/${e.file}`));
    const report = (descriptor) => {
      const entry = allowed.find((e) => e.fn === functionName(descriptor.node));
      if (!entry) context.report(descriptor);
      else if (descriptor.data.lineCount > entry.lines)
        context.report({ ...descriptor, data: { ...descriptor.data, maxLines: `${entry.lines} (LONG_FUNCTIONS)` } });
    };
    return maxLinesPerFunction.create(Object.create(context, { report: { value: report } }));
  },
};
// `eslint --cache` knows a plugin by its name and version, not its code: this file's hash as the version
// makes an edit of the rule above re-lint every file.
const local = {
  meta: {
    name: "pi-context-local",
    version: createHash("sha256")
      .update(readFileSync(new URL(import.meta.url)))
      .digest("hex")
      .slice(0, 16),
  },
  rules: { "function-size": functionSize },
};

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
  // Functions and files small enough to read. Only code lines count: a docstring never needs squeezing.
  // A file over 600 code lines only with a reason at the top (`/* eslint max-lines: ["error", N] -- why */`).
  {
    files: ["src/**/*.ts", "webview/**/*.ts"],
    plugins: { local },
    rules: {
      "local/function-size": [
        "error",
        { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true, allow: LONG_FUNCTIONS },
      ],
      "max-lines": ["error", { max: 600, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    rules: { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
);
