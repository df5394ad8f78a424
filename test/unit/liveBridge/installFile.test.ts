/** The install marker of the bridge file (`src/liveBridge/installFile.ts`): current / outdated / newer / modified / foreign. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { BRIDGE_VERSION } from "../../../src/bridge/protocol";
import { compareVersions } from "../../../src/core/pi/versions";
import {
  bridgeInstallPath,
  bridgeStatus,
  ForeignBridgeFileError,
  installBridgeFile,
  installedText,
  MARKER_PREFIX,
  parseInstalled,
  removeBridgeFile,
} from "../../../src/liveBridge/installFile";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-install-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

describe("install marker", () => {
  const body = "// bridge\nexport default function () {}\n";
  it("installs with a marker, recognises current / outdated / newer / modified / foreign files, removes only its own", () => {
    const agent = fresh("agent");
    assert.equal(bridgeStatus(agent, body).state, "missing");
    const { file, before } = installBridgeFile(agent, body);
    assert.equal(before.state, "missing");
    assert.equal(file, bridgeInstallPath(agent));
    const text = fs.readFileSync(file, "utf8");
    assert.ok(text.startsWith(MARKER_PREFIX));
    assert.equal(text, installedText(body));
    assert.deepEqual(parseInstalled(text)?.body, body);
    const current = bridgeStatus(agent, body);
    assert.equal(current.state, "current");
    assert.deepEqual(current.installed, current.shipped);
    assert.equal(current.installed?.version, BRIDGE_VERSION);
    assert.equal(bridgeStatus(agent, body + "// changed\n").state, "outdated");
    // a newer pi-context installed it
    const newer = JSON.parse(text.slice(MARKER_PREFIX.length, text.indexOf("\n")));
    fs.writeFileSync(file, `${MARKER_PREFIX}${JSON.stringify({ ...newer, version: "99.0.0" })}\n${body}`);
    assert.equal(bridgeStatus(agent, body + "x").state, "newer");
    // edited by hand
    fs.writeFileSync(file, text + "// my edit\n");
    assert.equal(bridgeStatus(agent, body).state, "modified");
    installBridgeFile(agent, body);
    assert.equal(bridgeStatus(agent, body).state, "current");
    assert.deepEqual(removeBridgeFile(agent, body).removed, true);
    assert.equal(fs.existsSync(file), false);
    assert.deepEqual(removeBridgeFile(agent, body).removed, false);
    // someone else's file of that name
    fs.writeFileSync(file, "export default function mine() {}\n");
    assert.equal(bridgeStatus(agent, body).state, "foreign");
    assert.throws(() => installBridgeFile(agent, body), ForeignBridgeFileError);
    assert.throws(() => removeBridgeFile(agent, body), ForeignBridgeFileError);
    assert.equal(fs.readFileSync(file, "utf8"), "export default function mine() {}\n");
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ["pi-context-bridge.js"], "no temp files left");
  });

  it("compares versions numerically", () => {
    assert.equal(compareVersions("1.10.0", "1.9.2"), 1);
    assert.equal(compareVersions("1.0", "1.0.0"), 0);
    assert.equal(compareVersions("0.9.9", "1.0.0"), -1);
  });
});
