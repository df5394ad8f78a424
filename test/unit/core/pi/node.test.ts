/** The Node that runs the user's pi (`src/core/pi/node.ts`) and the login shell's PATH (`shellPath.ts`), with fake binaries. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { piAt, type PiInstall } from "../../../../src/core/pi/locate";
import { NoNodeForPiError, nodeCandidates, nodeForPi } from "../../../../src/core/pi/node";
import { loginShellPath } from "../../../../src/core/pi/shellPath";
import { fakeGlobalInstall, write } from "./fakePi";

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-node-")));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

/** A fake `node` that prints `version` for `--version`. */
function fakeNode(dir: string, version: string): string {
  const file = write(path.join(dir, "node"), `#!/bin/sh\necho ${version}\n`);
  fs.chmodSync(file, 0o755);
  return file;
}

describe("the Node for the user's pi", () => {
  it("the PATH pi was found on first, then the node next to pi; the first that satisfies engines.node", async () => {
    const g = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const old = fakeNode(fresh("bin"), "v20.20.2");
    const next = fakeNode(g.bin, "v22.23.5");
    const install = piAt(path.join(g.bin, "pi"), "path", { HOME: tmp }, `${path.dirname(old)}:${g.bin}`) as PiInstall;
    assert.deepEqual(nodeCandidates(install, { PATH: "" }), [old, next]);
    const runtime = await nodeForPi(install, { env: { PATH: "" } });
    assert.equal(runtime.node, next);
    assert.equal(runtime.nodeVersion, "v22.23.5");
  });

  it("no usable Node: a clear error naming every Node looked at", async () => {
    const g = fakeGlobalInstall(fresh("prefix"), "1.5.2");
    const old = fakeNode(fresh("bin"), "v20.20.2");
    const install = piAt(path.join(g.bin, "pi"), "path", { HOME: tmp }, path.dirname(old)) as PiInstall;
    await assert.rejects(
      nodeForPi(install, { env: { PATH: "" } }),
      (e: unknown) =>
        e instanceof NoNodeForPiError &&
        e.message.includes("pi 1.5.2 needs Node >=22.19.0") &&
        e.message.includes(`${old} (v20.20.2)`) &&
        /Install Node 22\.19 or newer/.test(e.message),
    );
  });
});

describe("the login shell's PATH", () => {
  it("reads PATH between markers, whatever the rc files print", async () => {
    const shell = write(
      path.join(fresh("shell"), "fakesh"),
      '#!/bin/sh\necho "welcome to the shell"\nPATH=/login/bin:/usr/bin\nexport PATH\neval "$4"\necho "bye"\n',
    );
    fs.chmodSync(shell, 0o755);
    assert.equal(await loginShellPath({ shell, env: { PATH: "/usr/bin" }, refresh: true }), "/login/bin:/usr/bin");
  });

  it("gives up after the timeout (the shell is killed) and on Windows", async () => {
    const shell = write(path.join(fresh("shell"), "slowsh"), "#!/bin/sh\nsleep 5\n");
    fs.chmodSync(shell, 0o755);
    const started = Date.now();
    assert.equal(await loginShellPath({ shell, env: {}, timeoutMs: 200, refresh: true }), undefined);
    assert.ok(Date.now() - started < 3000);
    assert.equal(await loginShellPath({ platform: "win32" }), undefined);
  });
});
