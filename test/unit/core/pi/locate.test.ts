/** Finding the user's pi by files (`src/core/pi/locate.ts`) on fake installs in temp dirs. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { findOnPath, locatePi, piAt, piOfProcess, piSourceText } from "../../../../src/core/pi/locate";
import { fakeGlobalInstall, fakeManagedInstall, fakePiPackage, write } from "./fakePi";

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-locate-")));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);
/** An environment with nothing of the machine's: no PATH entries, a private HOME. */
const isolated = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ HOME: fresh("home"), PATH: "", ...extra });

describe("locatePi", () => {
  it("finds pi on the PATH through its symlink and reads version, engines and pi-ai from package.json", () => {
    const g = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const found = locatePi({ env: isolated({ PATH: `/nonexistent:${g.bin}` }) });
    assert.equal(found.pi?.version, "1.5.2");
    assert.equal(found.pi?.source, "path");
    assert.equal(found.pi?.packageDir, g.packageDir);
    assert.equal(found.pi?.cliPath, path.join(g.packageDir, "dist", "bundle", "cli.js"));
    assert.equal(found.pi?.engines, ">=22.19.0");
    assert.deepEqual(found.pi?.piAi, {
      dir: path.join(g.packageDir, "node_modules", "@earendil-works", "pi-ai"),
      version: "1.5.2",
    });
    assert.equal(found.pi?.executable, path.join(g.bin, "pi"));
    assert.equal(found.pi?.searchPath, `/nonexistent:${g.bin}`);
    assert.equal(piSourceText(found.pi!), `the pi on the PATH (${path.join(g.bin, "pi")})`);
  });

  it("the first pi on the PATH wins", () => {
    const a = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const b = fakeGlobalInstall(fresh("prefix"), "1.6.0");
    assert.equal(locatePi({ env: isolated({ PATH: `${b.bin}:${a.bin}` }) }).pi?.version, "1.6.0");
    assert.equal(locatePi({ env: isolated({ PATH: `${a.bin}:${b.bin}` }) }).pi?.version, "1.5.2");
  });

  it("the setting wins over the PATH (an executable or pi's package dir, ~ expanded); a wrong one is reported and skipped", () => {
    const onPath = fakeGlobalInstall(fresh("prefix"), "1.6.0");
    const home = fresh("home");
    const pkg = fakePiPackage(path.join(home, "pis", "pi-1.4.0"), "1.4.0");
    const env = isolated({ PATH: onPath.bin, HOME: home });
    const bySetting = locatePi({ env, setting: "~/pis/pi-1.4.0" });
    assert.equal(bySetting.pi?.version, "1.4.0");
    assert.equal(bySetting.pi?.source, "setting");
    assert.equal(bySetting.pi?.packageDir, pkg);
    const wrong = locatePi({ env, setting: path.join(home, "nothing-here") });
    assert.equal(wrong.pi?.version, "1.6.0");
    assert.match(wrong.tried[0]!.result, /does not exist/);
    const flag = locatePi({ env, setting: pkg, flag: path.join(onPath.bin, "pi") });
    assert.equal(flag.pi?.source, "flag");
    assert.equal(flag.pi?.version, "1.6.0");
  });

  it("a directory that is not pi is said so", () => {
    const dir = fresh("not-pi");
    write(path.join(dir, "package.json"), { name: "something-else", version: "1.0.0" });
    const found = piAt(dir, "setting", isolated());
    assert.ok("problem" in found && /is not pi/.test(found.problem), JSON.stringify(found));
  });

  it("the login shell's PATH only when the process's PATH has no pi", () => {
    const shellPi = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const hostPi = fakeGlobalInstall(fresh("prefix"), "1.6.0");
    const viaShell = locatePi({ env: isolated({ PATH: "/usr/bin" }), loginShellPath: `/usr/bin:${shellPi.bin}` });
    assert.equal(viaShell.pi?.source, "login-shell");
    assert.equal(viaShell.pi?.version, "1.5.2");
    const viaHost = locatePi({ env: isolated({ PATH: hostPi.bin }), loginShellPath: shellPi.bin });
    assert.equal(viaHost.pi?.source, "path");
    assert.equal(viaHost.pi?.version, "1.6.0");
  });

  it("pi's managed install: $PI_MANAGED_INSTALL_ROOT or ~/.pi/agent/install, only with a valid marker", () => {
    const root = fresh("managed");
    const release = fakeManagedInstall(root, "1.5.2");
    const found = locatePi({ env: isolated({ PI_MANAGED_INSTALL_ROOT: root }) });
    assert.equal(found.pi?.source, "managed");
    assert.equal(found.pi?.version, "1.5.2");
    assert.equal(found.pi?.packageDir, release);
    assert.equal(found.pi?.managedRoot, root);
    assert.equal(piSourceText(found.pi!), `pi's managed install (${root})`);
    const home = fresh("home");
    fakeManagedInstall(path.join(home, ".pi", "agent", "install"), "1.4.0");
    assert.equal(locatePi({ env: isolated({ HOME: home }) }).pi?.version, "1.4.0");
    const bad = fresh("managed");
    fakeManagedInstall(bad, "1.5.2", { layout: "something-else" });
    assert.equal(locatePi({ env: isolated({ PI_MANAGED_INSTALL_ROOT: bad }) }).pi, undefined);
  });

  it("a managed install's launcher script on the PATH (not a symlink) resolves to the current release", () => {
    const home = fresh("home");
    const root = path.join(home, ".pi", "agent", "install");
    fakeManagedInstall(root, "1.5.2");
    const launcher = write(path.join(home, ".pi", "agent", "bin", "pi"), "#!/bin/sh\nexec something\n");
    fs.chmodSync(launcher, 0o755);
    const found = locatePi({ env: isolated({ HOME: home, PATH: path.dirname(launcher) }) });
    assert.equal(found.pi?.source, "path");
    assert.equal(found.pi?.version, "1.5.2");
    assert.equal(found.pi?.managedRoot, root);
  });

  it("npm's global packages: NPM_CONFIG_PREFIX, prefix= of ~/.npmrc, the prefix of node on the PATH, npm root -g", () => {
    const a = fakeGlobalInstall(fresh("prefix"), "1.0.3");
    fs.rmSync(path.join(a.bin, "pi")); // a global install whose bin dir is not on the PATH
    const byPrefix = locatePi({ env: isolated({ NPM_CONFIG_PREFIX: path.dirname(a.bin) }) });
    assert.equal(byPrefix.pi?.source, "npm-global");
    assert.equal(byPrefix.pi?.version, "1.0.3");
    const home = fresh("home");
    write(path.join(home, ".npmrc"), `registry=https://example.invalid/\nprefix=${path.dirname(a.bin)}\n`);
    assert.equal(locatePi({ env: isolated({ HOME: home }) }).pi?.version, "1.0.3");
    const nodeDir = path.join(path.dirname(a.bin), "bin");
    const node = write(path.join(nodeDir, "node"), "#!/bin/sh\n");
    fs.chmodSync(node, 0o755);
    assert.equal(locatePi({ env: isolated({ PATH: nodeDir }) }).pi?.version, "1.0.3");
    const byNpmRoot = locatePi({ env: isolated(), npmRoot: path.join(path.dirname(a.bin), "lib", "node_modules") });
    assert.equal(byNpmRoot.pi?.version, "1.0.3");
  });

  it("nothing found: every place looked at is reported", () => {
    const found = locatePi({ env: isolated() });
    assert.equal(found.pi, undefined);
    assert.ok(found.tried.some((t) => t.where === "the PATH" && t.result === "no pi"));
    assert.ok(found.tried.some((t) => t.where.startsWith("pi's managed install")));
  });

  it("findOnPath skips directories and non-executables", () => {
    const dir = fresh("path");
    fs.mkdirSync(path.join(dir, "pi"), { recursive: true });
    const other = fresh("path");
    write(path.join(other, "pi"), "not executable");
    assert.equal(findOnPath("pi", `${dir}:${other}`, {}, "linux"), undefined);
  });
});

describe("piOfProcess", () => {
  it("reads the script of a running pi from /proc/<pid>/cmdline (the Node binary is skipped)", () => {
    const g = fakeGlobalInstall(fresh("prefix"), "1.6.0");
    const proc = fresh("proc");
    write(
      path.join(proc, "4242", "cmdline"),
      [process.execPath, path.join(g.bin, "pi"), "--mode", "rpc", ""].join("\0"),
    );
    const found = piOfProcess(4242, proc);
    assert.equal(found?.version, "1.6.0");
    assert.equal(found?.source, "running");
    assert.equal(piOfProcess(4243, proc), undefined);
  });
});

describe("piOfProcess after pi set process.title", () => {
  it("the command line is only `pi`: the command the shell ran (`_` in /proc/<pid>/environ) names the install", () => {
    const g = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const proc = fresh("proc");
    write(path.join(proc, "5151", "cmdline"), ["pi", "", "", ""].join("\0"));
    write(path.join(proc, "5151", "environ"), ["HOME=/h", `_=${path.join(g.bin, "pi")}`, "TERM=xterm", ""].join("\0"));
    const found = piOfProcess(5151, proc);
    assert.equal(found?.version, "1.5.2");
    assert.equal(found?.source, "running");
    assert.equal(found?.packageDir, g.packageDir);
    // a `_` that is not a pi (a wrapper, a shell) is not guessed from
    write(path.join(proc, "5152", "cmdline"), ["pi", ""].join("\0"));
    write(path.join(proc, "5152", "environ"), [`_=${process.execPath}`, ""].join("\0"));
    assert.equal(piOfProcess(5152, proc), undefined);
  });
});
