// `npm run lint` (depcruise step): no import cycles in src/ and webview/, type-only imports included
// (a type cycle between adapters is what src/services.ts exists to prevent). Layer rules live in
// eslint.config.mjs (no-restricted-imports), so every rule names docs/architecture.md in its message.
/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
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
