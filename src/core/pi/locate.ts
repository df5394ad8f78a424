/**
 * Find the user's pi and its version by reading files only (nothing is executed). Order of
 * {@link locatePi}, first hit wins: an explicit path (`--pi`, `piContext.pi.path`); `pi` on this
 * process's PATH; on the login shell's PATH (`shellPath.ts`); pi's managed install
 * (`$PI_MANAGED_INSTALL_ROOT`, else `~/.pi/agent/install`); npm's global packages.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as l10n from "@vscode/l10n";

export const PI_PACKAGE = "@earendil-works/pi-coding-agent";
const PI_AI_PACKAGE = "@earendil-works/pi-ai";

export type PiSource = "flag" | "setting" | "running" | "path" | "login-shell" | "managed" | "npm-global";

export interface PiInstall {
  version: string;
  source: PiSource;
  /** The path the search started from (PATH entry, given path, launcher). */
  executable?: string;
  packageDir: string;
  /** `bin.pi` of package.json. */
  cliPath: string;
  engines?: string;
  /** Found by Node's lookup from pi's package dir (library code and extensions use it). */
  piAi?: { dir: string; version: string };
  managedRoot?: string;
  /** For finding its Node. */
  searchPath?: string;
}

export interface LocateAttempt {
  where: string;
  result: string;
}

export interface PiLocation {
  pi?: PiInstall;
  tried: LocateAttempt[];
}

export interface LocateOptions {
  /** A pi executable, a launcher, or pi's package dir. */
  flag?: string;
  /** `~` expanded. */
  setting?: string;
  env?: NodeJS.ProcessEnv;
  loginShellPath?: string;
  npmRoot?: string;
  platform?: NodeJS.Platform;
}

type Json = Record<string, unknown>;

function readJson(file: string): Json | undefined {
  try {
    const text = fs.readFileSync(file, "utf8");
    const parsed: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return typeof parsed === "object" && parsed !== null ? (parsed as Json) : undefined;
  } catch {
    return undefined;
  }
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function expandHome(p: string, env: NodeJS.ProcessEnv): string {
  if (p === "~" || p.startsWith("~/") || p.startsWith("~\\")) return path.join(env.HOME || os.homedir(), p.slice(1));
  return p;
}

/** The first executable `name` on `pathValue` (Windows: with PATHEXT), or undefined. */
export function findOnPath(
  name: string,
  pathValue: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const exts = platform === "win32" ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";")] : [""];
  for (const dir of (pathValue ?? "").split(platform === "win32" ? ";" : ":")) {
    if (!dir) continue;
    for (const ext of exts) {
      const file = path.join(dir, name + ext.toLowerCase());
      try {
        if (platform !== "win32") fs.accessSync(file, fs.constants.X_OK);
        if (isFile(file)) return file;
      } catch {}
    }
  }
  return undefined;
}

function piPackageAbove(start: string): string | undefined {
  for (let d = start; ; d = path.dirname(d)) {
    if (readJson(path.join(d, "package.json"))?.name === PI_PACKAGE) return d;
    if (d === path.dirname(d)) return undefined;
  }
}

function lookupPackage(fromDir: string, name: string): string | undefined {
  for (let d = fromDir; ; d = path.dirname(d)) {
    const p = path.join(d, "node_modules", name);
    if (isFile(path.join(p, "package.json"))) return fs.realpathSync(p);
    if (d === path.dirname(d)) return undefined;
  }
}

function managedRelease(root: string): string | undefined {
  const marker = readJson(path.join(root, "managed-install.json"));
  if (marker?.kind !== "pi-managed-install" || marker.schemaVersion !== 1 || marker.layout !== "releases-v1")
    return undefined;
  let version: string;
  try {
    version = fs.readFileSync(path.join(root, "current-version"), "utf8").trim();
  } catch {
    return undefined;
  }
  if (!/^[\w.+-]+$/.test(version)) return undefined;
  const dir = path.join(root, "releases", version, "node_modules", PI_PACKAGE);
  return readJson(path.join(dir, "package.json"))?.name === PI_PACKAGE ? fs.realpathSync(dir) : undefined;
}

function describe(packageDir: string, source: PiSource, extra: Partial<PiInstall>): PiInstall | undefined {
  const pkg = readJson(path.join(packageDir, "package.json"));
  if (!pkg || pkg.name !== PI_PACKAGE || typeof pkg.version !== "string") return undefined;
  const bin = typeof pkg.bin === "string" ? pkg.bin : ((pkg.bin as Json | undefined)?.pi as string | undefined);
  const install: PiInstall = {
    version: pkg.version,
    source,
    packageDir,
    cliPath: path.join(packageDir, bin ?? "dist/bundle/cli.js"),
    ...extra,
  };
  const engines = (pkg.engines as Json | undefined)?.node;
  if (typeof engines === "string") install.engines = engines;
  const piAiDir = lookupPackage(packageDir, PI_AI_PACKAGE);
  const piAiVersion = piAiDir ? readJson(path.join(piAiDir, "package.json"))?.version : undefined;
  if (piAiDir && typeof piAiVersion === "string") install.piAi = { dir: piAiDir, version: piAiVersion };
  return install;
}

/** pi.dev's installer layout. */
function managedRoots(exe: string | undefined, env: NodeJS.ProcessEnv): string[] {
  const roots = [env.PI_MANAGED_INSTALL_ROOT];
  if (exe) roots.push(path.join(path.dirname(path.dirname(exe)), "install"));
  roots.push(path.join(env.HOME || os.homedir(), ".pi", "agent", "install"));
  return [...new Set(roots.filter((r): r is string => !!r))];
}

/**
 * pi at a path: an executable or launcher (symlinks resolved, package.json searched above; npm's
 * Windows shims), or pi's package dir. Reads files only. @returns the install, or why it is not a pi.
 */
export function piAt(
  given: string,
  source: PiSource,
  env: NodeJS.ProcessEnv = process.env,
  searchPath?: string,
): PiInstall | { problem: string } {
  const file = path.resolve(expandHome(given, env));
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return { problem: l10n.t("{0} does not exist", file) };
  }
  const extra: Partial<PiInstall> = { executable: file, ...(searchPath !== undefined ? { searchPath } : {}) };
  let stat: fs.Stats;
  try {
    stat = fs.statSync(real);
  } catch (error) {
    return { problem: `${file}: ${(error as Error).message}` };
  }
  const start = stat.isDirectory() ? real : path.dirname(real);
  const dir = piPackageAbove(start);
  if (dir) return describe(dir, source, extra) ?? { problem: l10n.t("{0}/package.json is not readable", dir) };
  if (stat.isDirectory()) {
    const inside = path.join(real, "node_modules", PI_PACKAGE);
    const d = describe(inside, source, extra);
    if (d) return d;
  }
  // npm's Windows shims (pi.cmd): <prefix>/node_modules or <prefix>/../lib/node_modules
  for (const candidate of [
    path.join(path.dirname(real), "node_modules", PI_PACKAGE),
    path.join(path.dirname(path.dirname(real)), "lib", "node_modules", PI_PACKAGE),
  ]) {
    const d = describe(candidate, source, extra);
    if (d) return d;
  }
  for (const root of managedRoots(real, env)) {
    const release = managedRelease(root);
    if (release)
      return (
        describe(release, source, { ...extra, managedRoot: root }) ?? { problem: l10n.t("{0}: unreadable", release) }
      );
  }
  return { problem: l10n.t("{0} is not pi (no {1} package.json above {2})", file, PI_PACKAGE, real) };
}

function npmGlobalDirs(env: NodeJS.ProcessEnv, pathValue: string | undefined, options: LocateOptions): string[] {
  const platform = options.platform ?? process.platform;
  const lib = (prefix: string) =>
    platform === "win32" ? path.join(prefix, "node_modules") : path.join(prefix, "lib", "node_modules");
  const dirs: string[] = [];
  if (env.NPM_CONFIG_PREFIX) dirs.push(lib(env.NPM_CONFIG_PREFIX));
  if (env.npm_config_prefix) dirs.push(lib(env.npm_config_prefix));
  try {
    const rc = fs.readFileSync(path.join(env.HOME || os.homedir(), ".npmrc"), "utf8");
    const m = /^\s*prefix\s*=\s*(.+?)\s*$/m.exec(rc);
    if (m) dirs.push(lib(expandHome(m[1]!.replace(/^["']|["']$/g, ""), env)));
  } catch {}
  const node = findOnPath("node", pathValue, env, platform);
  if (node) {
    try {
      const real = fs.realpathSync(node);
      dirs.push(lib(platform === "win32" ? path.dirname(real) : path.dirname(path.dirname(real))));
    } catch {}
  }
  if (options.npmRoot) dirs.push(options.npmRoot);
  return [...new Set(dirs)];
}

export const SETTING_LABEL = "setting piContext.pi.path";

/** Find the user's pi (order in the file comment). Never throws; reads files only. */
export function locatePi(options: LocateOptions = {}): PiLocation {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const tried: LocateAttempt[] = [];
  // each place looked at is recorded in `tried`, with the pi found there or why not
  const at = (given: string, source: PiSource, label: string, searchPath: string | undefined) => {
    const found = piAt(given, source, env, searchPath);
    if ("problem" in found) {
      tried.push({ where: label, result: found.problem });
      return undefined;
    }
    tried.push({ where: label, result: l10n.t("pi {0} at {1}", found.version, found.packageDir) });
    return found;
  };
  const explicit = (value: string | undefined, source: "flag" | "setting", label: string): PiInstall | undefined =>
    value?.trim() ? at(value.trim(), source, label, env.PATH) : undefined;
  const onPath = (pathValue: string | undefined, source: "path" | "login-shell", label: string) => {
    const exe = findOnPath("pi", pathValue, env, platform);
    if (exe) return at(exe, source, label, pathValue);
    tried.push({ where: label, result: l10n.t("no pi") });
    return undefined;
  };
  const done = (pi: PiInstall | undefined): PiLocation | undefined => (pi ? { pi, tried } : undefined);

  const hit =
    done(explicit(options.flag, "flag", "--pi")) ??
    done(explicit(options.setting, "setting", SETTING_LABEL)) ??
    done(onPath(env.PATH, "path", l10n.t("the PATH"))) ??
    (options.loginShellPath !== undefined && options.loginShellPath !== env.PATH
      ? done(onPath(options.loginShellPath, "login-shell", l10n.t("the login shell's PATH")))
      : undefined);
  if (hit) return hit;

  for (const root of managedRoots(undefined, env)) {
    const release = managedRelease(root);
    if (!release) {
      tried.push({ where: l10n.t("pi's managed install {0}", root), result: "none" });
      continue;
    }
    const found = describe(release, "managed", { managedRoot: root });
    if (found) {
      tried.push({ where: l10n.t("pi's managed install {0}", root), result: `pi ${found.version}` });
      return { pi: found, tried };
    }
  }
  for (const dir of npmGlobalDirs(env, env.PATH, options)) {
    const found = describe(path.join(dir, PI_PACKAGE), "npm-global", {});
    tried.push({
      where: l10n.t("npm's global packages {0}", dir),
      result: found ? `pi ${found.version}` : l10n.t("no pi"),
    });
    if (found) return { pi: found, tried };
  }
  return { tried };
}

export function piSourceText(pi: Pick<PiInstall, "source" | "executable" | "packageDir" | "managedRoot">): string {
  const at = pi.executable ?? pi.packageDir;
  switch (pi.source) {
    case "flag":
      return `--pi ${at}`;
    case "setting":
      return l10n.t("setting piContext.pi.path ({0})", at);
    case "running":
      return l10n.t("the running pi ({0})", at);
    case "path":
      return l10n.t("the pi on the PATH ({0})", at);
    case "login-shell":
      return l10n.t("the pi on your login shell's PATH ({0})", at);
    case "managed":
      return l10n.t("pi's managed install ({0})", pi.managedRoot ?? at);
    case "npm-global":
      return l10n.t("npm's global packages ({0})", pi.packageDir);
  }
}

/**
 * The pi a running process executes (Linux), from `/proc/<pid>/cmdline`'s script, else `environ`'s `_`
 * (pi's `process.title` overwrites the command line). Undefined when gone, unreadable, or not pi.
 */
export function piOfProcess(pid: number, procRoot = "/proc"): PiInstall | undefined {
  const base = path.join(procRoot, String(pid));
  const read = (name: string): string[] => {
    try {
      return fs.readFileSync(path.join(base, name), "utf8").split("\0");
    } catch {
      return [];
    }
  };
  for (const arg of read("cmdline").slice(1)) {
    if (!path.isAbsolute(arg) || !isFile(arg)) continue;
    const dir = piPackageAbove(path.dirname(fs.realpathSync(arg)));
    const found = dir ? describe(dir, "running", { executable: arg }) : undefined;
    if (found) return found;
  }
  const ran = read("environ")
    .find((v) => v.startsWith("_="))
    ?.slice(2);
  if (ran && path.isAbsolute(ran) && /^pi(\.cmd|\.exe)?$/i.test(path.basename(ran)) && isFile(ran)) {
    const found = piAt(ran, "running");
    if (!("problem" in found)) return found;
  }
  return undefined;
}
