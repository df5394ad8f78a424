/**
 * Fake pi installs on temp dirs for the unit tests of `src/core/pi/`: the layouts of npm's global
 * install, pi's managed install, and a pi-ai package with JSON catalog data — files only, nothing
 * that runs.
 */

import * as fs from "node:fs";
import * as path from "node:path";

/** Write `file` (parents created). */
export function write(file: string, content: string | object): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

/** A pi-ai package dir with one provider (`demo`) in the 1.x data layout (schema 6) or 0.87's (schema 3). */
export function fakePiAi(
  dir: string,
  version: string,
  schemaVersion = 6,
  generatedAt = "2026-11-10T12:05:37.628Z",
): string {
  write(path.join(dir, "package.json"), { name: "@earendil-works/pi-ai", version });
  const data = path.join(dir, "dist", "providers", "data");
  write(path.join(data, ".manifest.json"), { schemaVersion, generatedAt, files: {} });
  write(
    path.join(dir, "dist", "models.generated.js"),
    `import { DEMO_MODELS } from "./providers/demo.models.js";\nexport const MODELS = {\n    "demo": DEMO_MODELS,\n};\n`,
  );
  write(
    path.join(dir, "dist", "providers", "demo.models.js"),
    `import values from "./data/demo.json" with { type: "json" };\nexport const DEMO_MODELS = flattenChatModelCatalog("demo", values);\n`,
  );
  const model = (id: string, contextWindow: number, type?: string) => ({
    id,
    name: `Demo ${id}`,
    contextWindow,
    maxTokens: 4096,
    reasoning: true,
    cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 },
    ...(type ? { type } : {}),
  });
  const groups =
    schemaVersion >= 6
      ? {
          "openai-completions": { "chat:big": model("big", 262144, "chat"), "image:pic": model("pic", 1000, "image") },
          "openai-responses": { "chat:big": model("big", 300000, "chat") },
        }
      : { "openai-completions": { big: model("big", 262144), small: model("small", 8000) } };
  write(path.join(data, "demo.json"), groups);
  return dir;
}

/** pi's package dir (package.json, bin, engines; an optional pi-ai next to it). */
export function fakePiPackage(dir: string, version: string, options: { piAiVersion?: string } = {}): string {
  write(path.join(dir, "package.json"), {
    name: "@earendil-works/pi-coding-agent",
    version,
    bin: { pi: "dist/bundle/cli.js" },
    engines: { node: ">=22.19.0" },
  });
  const cli = write(
    path.join(dir, "dist", "bundle", "cli.js"),
    "#!/usr/bin/env node\n// fake pi: never run by these tests\n",
  );
  fs.chmodSync(cli, 0o755); // npm makes a bin executable
  if (options.piAiVersion) fakePiAi(path.join(dir, "node_modules", "@earendil-works", "pi-ai"), options.piAiVersion);
  return dir;
}

/** `npm install -g --prefix <prefix>`: `bin/pi` → `lib/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js`. */
export function fakeGlobalInstall(prefix: string, version: string): { bin: string; packageDir: string } {
  const packageDir = fakePiPackage(
    path.join(prefix, "lib", "node_modules", "@earendil-works", "pi-coding-agent"),
    version,
    {
      piAiVersion: version,
    },
  );
  fs.mkdirSync(path.join(prefix, "bin"), { recursive: true });
  fs.symlinkSync(path.join(packageDir, "dist", "bundle", "cli.js"), path.join(prefix, "bin", "pi"));
  return { bin: path.join(prefix, "bin"), packageDir };
}

/** pi's managed install root with one release (`managed-install.json`, `current-version`, `releases/<v>/`). */
export function fakeManagedInstall(root: string, version: string, marker: object = {}): string {
  write(path.join(root, "managed-install.json"), {
    kind: "pi-managed-install",
    schemaVersion: 1,
    layout: "releases-v1",
    ...marker,
  });
  write(path.join(root, "current-version"), `${version}\n`);
  return fakePiPackage(
    path.join(root, "releases", version, "node_modules", "@earendil-works", "pi-coding-agent"),
    version,
    {
      piAiVersion: version,
    },
  );
}
