#!/usr/bin/env node
// Start a real VS Code (code-server, which bundles the VS Code server) on 127.0.0.1 with a free
// port and fully isolated state, for integration tests, e2e tests and the demo.
// See docs/testing.md. Needs `node scripts/vscode-host-setup.mjs` first (the CLI runs it).
//
// Module:
//   const server = await startVscodeServer({ devExtension: repoRoot, settings, env, smokeTestDriver: true });
//   const url = server.workbenchUrl({ folder: "/abs/ws", payload: [["skipWelcome", "true"]] });
//   ...
//   await server.stop();   // kills the whole process group, removes the temp dirs
//
// CLI (prints the URL and keeps running until Ctrl-C):
//   node scripts/vscode-host.mjs [--folder DIR | --workspace FILE.code-workspace]
//        [--dev [DIR] | --vsix FILE] [--setting key=json] [--env KEY=VALUE]
//        [--smoke-test-driver] [--port N] [--keep-temp]
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVscodeHost, hostIsReady, hostPaths, repoRoot } from "./vscode-host-setup.mjs";

export { repoRoot };

/** Settings that keep the workbench quiet and offline-friendly in tests and the demo. */
export const QUIET_SETTINGS = Object.freeze({
  "chat.disableAIFeatures": true,
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "security.workspace.trust.enabled": false,
  "git.enabled": false,
  "github.gitAuthentication": false,
  "npm.autoDetect": "off",
  "typescript.tsserver.enableTracing": false,
  "window.restoreWindows": "none",
  "files.hotExit": "off",
  "editor.minimap.enabled": false,
});

/** A free TCP port on 127.0.0.1 (bound then released; retried by startVscodeServer on a clash). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

const live = new Set(); // servers to kill on exit

function killGroupSync(child, signal) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

let exitHandlersInstalled = false;
function installExitHandlers() {
  if (exitHandlersInstalled) return;
  exitHandlersInstalled = true;
  process.on("exit", () => {
    for (const s of live) s._killNow();
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.once(sig, () => {
      for (const s of live) s._killNow();
      process.exit(sig === "SIGINT" ? 130 : 143);
    });
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitHealthy(baseUrl, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let lastErr = "";
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`code-server exited early (${child.exitCode ?? child.signalCode})`);
    }
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      lastErr = `HTTP ${res.status}`;
    } catch (err) {
      lastErr = String(err?.cause?.code ?? err?.message ?? err);
    }
    await sleep(200);
  }
  throw new Error(`code-server not healthy after ${timeoutMs} ms (${lastErr})`);
}

/**
 * Build the environment of code-server (and so of the extension host and the tests in it).
 * Isolates HOME, XDG_* and TMPDIR inside `tmp`.
 */
function isolatedEnv(tmp, extraEnv) {
  const env = {};
  // keep only what a process needs; drop npm/node-debugging/VS Code variables of the caller
  for (const k of ["PATH", "LANG", "LC_ALL", "TZ", "TERM", "USER", "LOGNAME", "SHELL"]) {
    if (process.env[k] !== undefined) env[k] = process.env[k];
  }
  Object.assign(env, {
    HOME: path.join(tmp, "home"),
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    XDG_RUNTIME_DIR: path.join(tmp, "xdg-runtime"),
    TMPDIR: path.join(tmp, "tmp"),
    VSCODE_CLI_DISABLE_KEYCHAIN_ENCRYPT: "1",
    DONT_PROMPT_WSL_INSTALL: "1",
  });
  for (const [k, v] of Object.entries(extraEnv ?? {})) {
    if (v === undefined || v === null) delete env[k];
    else env[k] = String(v);
  }
  return env;
}

/**
 * @typedef {object} StartOptions
 * @property {string} [devExtension] absolute path of an extension folder to load as a development extension (via the payload)
 * @property {string} [vsix] a packaged extension to install into the private extensions dir before starting
 * @property {string} [linkExtension] an extension folder (e.g. this repo after `node esbuild.mjs`) to
 *   load as a normally installed extension: a symlink `<publisher>.<name>-<version>` in the private
 *   extensions dir, which VS Code registers on first start. Unlike `devExtension` it needs no
 *   smoke-test driver, so the workbench behaves as for a user (notification toasts are shown).
 * @property {string} [folder] default folder for workbenchUrl()
 * @property {string} [workspace] default .code-workspace file for workbenchUrl()
 * @property {Record<string, unknown>} [settings] user settings, merged over QUIET_SETTINGS
 * @property {Record<string, string|undefined>} [env] extra environment of the server and extension host
 * @property {boolean} [smokeTestDriver] start with --vscode-option enable-smoke-test-driver (needed for extensionTestsPath / extensionDevelopmentPath in the payload)
 * @property {number} [port] fixed port (default: a free one)
 * @property {string} [logFile] where server stdout/stderr go (default <tmp>/server.log)
 * @property {boolean} [keepTemp] keep the temp dir on stop (also env PI_CONTEXT_KEEP_TMP=1)
 * @property {boolean} [setup] run the idempotent host setup first (default true)
 * @property {boolean} [quiet]
 * @property {number} [healthTimeoutMs]
 * @property {string[]} [extraArgs] more code-server arguments
 */

/**
 * Start code-server. Resolves once /healthz answers.
 * @param {StartOptions} [options]
 */
export async function startVscodeServer(options = {}) {
  const {
    devExtension,
    vsix,
    linkExtension,
    settings = {},
    env: extraEnv = {},
    smokeTestDriver = false,
    logFile,
    keepTemp = process.env.PI_CONTEXT_KEEP_TMP === "1",
    setup = true,
    quiet = false,
    healthTimeoutMs = 60_000,
    extraArgs = [],
  } = options;
  const say = (...a) => !quiet && console.log("[vscode-host]", ...a);
  const hp = setup ? ensureVscodeHost({ quiet: true }) : hostPaths();
  if (!setup && !hostIsReady()) throw new Error("test host not installed: run `npm run host:setup`");

  const tmp = mkdtempSync(path.join(os.tmpdir(), "pi-context-vscode-"));
  const dirs = {
    tmp,
    userData: path.join(tmp, "user-data"),
    extensions: path.join(tmp, "extensions"),
  };
  for (const d of [
    "home",
    "xdg-config",
    "xdg-data",
    "xdg-cache",
    "xdg-runtime",
    "tmp",
    "user-data/User",
    "user-data/Machine",
    "extensions",
  ]) {
    mkdirSync(path.join(tmp, d), { recursive: true, mode: 0o700 });
  }
  const allSettings = { ...QUIET_SETTINGS, ...settings };
  writeFileSync(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(allSettings, null, 2));
  writeFileSync(path.join(dirs.userData, "Machine", "settings.json"), JSON.stringify(allSettings, null, 2));
  const env = isolatedEnv(tmp, extraEnv);

  const commonArgs = ["--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
  if (vsix) {
    const abs = path.resolve(vsix);
    if (!existsSync(abs)) throw new Error(`vsix not found: ${abs}`);
    say(`installing ${path.basename(abs)}`);
    const r = spawnSync(hp.node, [hp.codeServerEntry, ...commonArgs, "--install-extension", abs, "--force"], {
      env,
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`--install-extension failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }

  if (linkExtension) {
    const dir = path.resolve(linkExtension);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    symlinkSync(dir, path.join(dirs.extensions, `${pkg.publisher}.${pkg.name}-${pkg.version}`), "dir");
  }

  const logPath = logFile ? path.resolve(logFile) : path.join(tmp, "server.log");
  mkdirSync(path.dirname(logPath), { recursive: true });
  installExitHandlers();

  let lastErr;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = options.port ?? (await freePort());
    const baseUrl = `http://127.0.0.1:${port}`;
    env.PI_CONTEXT_VSCODE_AUTHORITY = `127.0.0.1:${port}`; // visible to tests in the extension host
    const configYaml = path.join(tmp, "config.yaml");
    writeFileSync(configYaml, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
    const args = [
      hp.codeServerEntry,
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--auth",
      "none",
      "--config",
      configYaml,
      ...commonArgs,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--ignore-last-opened",
      ...(smokeTestDriver ? ["--vscode-option", "enable-smoke-test-driver"] : []),
      ...extraArgs,
    ];
    const logStream = createWriteStream(logPath, { flags: "a" });
    logStream.write(`\n=== ${new Date().toISOString()} ${hp.node} ${args.join(" ")}\n`);
    const child = spawn(hp.node, args, { env, cwd: tmp, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(logStream, { end: false });
    child.stderr.pipe(logStream, { end: false });
    const exited = new Promise((resolve) => child.once("exit", resolve));

    let stopped = false;
    const server = {
      port,
      baseUrl,
      /** vscode-remote:// authority of this server, for payload URIs */
      authority: `127.0.0.1:${port}`,
      tmpDir: tmp,
      userDataDir: dirs.userData,
      extensionsDir: dirs.extensions,
      logFile: logPath,
      pid: child.pid,
      env,
      /** vscode-remote URI of an absolute path on this server */
      remoteUri(absPath) {
        return `vscode-remote://127.0.0.1:${port}${encodeURI(absPath)}`;
      },
      /**
       * Workbench URL. `payload` is [key, value][] like VS Code's; extensionDevelopmentPath and
       * extensionTestsPath values may be absolute paths (converted to vscode-remote URIs).
       * @param {{folder?: string, workspace?: string, payload?: [string,string][], extensionTestsPath?: string, devExtension?: string|false}} [o]
       */
      workbenchUrl(o = {}) {
        const q = new URLSearchParams();
        const ws = o.workspace ?? (o.folder ? undefined : options.workspace);
        const folder = o.folder ?? (o.workspace ? undefined : options.folder);
        if (ws) q.set("workspace", path.resolve(ws));
        else if (folder) q.set("folder", path.resolve(folder));
        else q.set("ew", "true");
        const payload = [];
        const dev = o.devExtension === false ? undefined : (o.devExtension ?? devExtension);
        if (dev) payload.push(["extensionDevelopmentPath", server.remoteUri(path.resolve(dev))]);
        if (o.extensionTestsPath)
          payload.push(["extensionTestsPath", server.remoteUri(path.resolve(o.extensionTestsPath))]);
        payload.push(["skipWelcome", "true"]);
        for (const [k, v] of o.payload ?? []) {
          payload.push([
            k,
            /^(extensionDevelopmentPath|extensionTestsPath)$/.test(k) && v.startsWith("/") ? server.remoteUri(v) : v,
          ]);
        }
        q.set("payload", JSON.stringify(payload));
        return `${baseUrl}/?${q.toString()}`;
      },
      /** synchronous last-resort cleanup (process exit / signal) */
      _killNow() {
        killGroupSync(child, "SIGKILL");
        if (!keepTemp) {
          try {
            rmSync(tmp, { recursive: true, force: true });
          } catch {
            /* best effort */
          }
        }
      },
      /**
       * Kill the server's process group (TERM, then KILL) and remove the temp dir.
       * @param {{saveLogsTo?: string}} [o] first copy VS Code's logs (user-data/logs: extension
       *   host, our output channels under exthost1/pi-context.pi-context/, …) to this dir
       */
      async stop(o = {}) {
        if (stopped) return;
        stopped = true;
        live.delete(server);
        if (child.exitCode === null && child.signalCode === null) {
          killGroupSync(child, "SIGTERM");
          const t = await Promise.race([exited.then(() => "exited"), sleep(5000).then(() => "timeout")]);
          if (t === "timeout") killGroupSync(child, "SIGKILL");
        }
        // children of the group (extension host, pty host, file watcher) may outlive the leader
        killGroupSync(child, "SIGKILL");
        await sleep(100);
        logStream.end();
        if (o.saveLogsTo) {
          try {
            const from = path.join(dirs.userData, "logs");
            if (existsSync(from)) cpSync(from, o.saveLogsTo, { recursive: true });
          } catch (err) {
            say(`could not save VS Code logs: ${err.message}`);
          }
        }
        if (!keepTemp) {
          try {
            rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
          } catch {
            /* best effort */
          }
        } else {
          say(`kept temp dir ${tmp}`);
        }
      },
    };
    live.add(server);
    try {
      await waitHealthy(baseUrl, child, healthTimeoutMs);
      say(`code-server up on ${baseUrl} (pid group ${child.pid}, log ${logPath})`);
      return server;
    } catch (err) {
      lastErr = err;
      stopped = false;
      live.delete(server);
      killGroupSync(child, "SIGKILL");
      await Promise.race([exited, sleep(2000)]);
      if (options.port) break;
      say(`start attempt ${attempt} failed: ${err.message}; retrying`);
    }
  }
  if (!keepTemp) rmSync(tmp, { recursive: true, force: true });
  throw new Error(`could not start code-server: ${lastErr?.message ?? lastErr} (log: ${logPath})`);
}

// ---------------------------------------------------------------- CLI
function parseCli(argv) {
  const o = { settings: {}, env: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    switch (a) {
      case "--folder":
        o.folder = path.resolve(next());
        break;
      case "--workspace":
        o.workspace = path.resolve(next());
        break;
      case "--dev":
        o.devExtension = argv[i + 1] && !argv[i + 1].startsWith("--") ? path.resolve(next()) : repoRoot;
        break;
      case "--vsix":
        o.vsix = path.resolve(next());
        break;
      case "--setting": {
        const [k, ...rest] = next().split("=");
        const raw = rest.join("=");
        try {
          o.settings[k] = JSON.parse(raw);
        } catch {
          o.settings[k] = raw;
        }
        break;
      }
      case "--env": {
        const [k, ...rest] = next().split("=");
        o.env[k] = rest.join("=");
        break;
      }
      case "--smoke-test-driver":
        o.smokeTestDriver = true;
        break;
      case "--port":
        o.port = Number(next());
        break;
      case "--keep-temp":
        o.keepTemp = true;
        break;
      case "-h":
      case "--help":
        console.log(readHelp());
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${a} (see --help)`);
    }
  }
  return o;
}

function readHelp() {
  return `usage: node scripts/vscode-host.mjs [--folder DIR | --workspace FILE] [--dev [DIR] | --vsix FILE]
       [--setting key=json]... [--env KEY=VALUE]... [--smoke-test-driver] [--port N] [--keep-temp]
Starts code-server on 127.0.0.1 with isolated state and prints the workbench URL. Ctrl-C stops it.
--dev loads DIR (default: this repo) as a development extension; it needs --smoke-test-driver,
which is turned on automatically.`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let server;
  try {
    const o = parseCli(process.argv.slice(2));
    if (o.devExtension) o.smokeTestDriver = true;
    server = await startVscodeServer(o);
    console.log(`\nVS Code: ${server.workbenchUrl()}\n(server log: ${server.logFile}; Ctrl-C to stop)`);
    setInterval(() => {}, 1 << 30); // stay alive until a signal; exit handlers kill the group
  } catch (err) {
    console.error("[vscode-host] FAILED:", err instanceof Error ? err.message : err);
    await server?.stop();
    process.exit(1);
  }
}
