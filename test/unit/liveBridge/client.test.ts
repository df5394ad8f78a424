/** The live bridge client's deadlines (`src/liveBridge/client.ts`) against sockets that misbehave. */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { BRIDGE_PROTOCOL } from "../../../src/bridge/protocol";
import { BridgeError, connectBridge } from "../../../src/liveBridge/client";
import { announcement } from "../../support/announcement";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-client-unit-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

describe("client deadlines", () => {
  it("times out on a socket that never says welcome, and refuses another protocol before connecting", async () => {
    const sock = path.join(fresh("s"));
    fs.mkdirSync(sock);
    const socketPath = path.join(sock, "x.sock");
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    try {
      const t0 = Date.now();
      const error = await connectBridge(announcement({ socket: socketPath }), { timeoutMs: 300 }).then(
        () => assert.fail("connected"),
        (e: BridgeError) => e,
      );
      assert.equal(error.code, "timeout");
      assert.match(error.message, /did not answer within 300 ms/);
      assert.ok(Date.now() - t0 < 2000);
      const other = await connectBridge(announcement({ socket: socketPath, protocol: BRIDGE_PROTOCOL + 1 })).then(
        () => assert.fail("connected"),
        (e: BridgeError) => e,
      );
      assert.equal(other.code, "protocol");
    } finally {
      silent.close();
    }
  });

  it("reports a missing socket of a live pid as stale", async () => {
    const error = await connectBridge(announcement({ socket: path.join(tmp, "none.sock") })).then(
      () => assert.fail("connected"),
      (e: BridgeError) => e,
    );
    assert.equal(error.code, "stale");
    assert.match(error.message, /ENOENT/);
  });
});
