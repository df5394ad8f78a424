/** A live bridge announcement for unit tests (`test/unit/bridge/`, `test/unit/liveBridge/`). */

import { BRIDGE_PROTOCOL, BRIDGE_VERSION, type Announcement } from "../../src/bridge/protocol";

/** A well-formed announcement of this test process's pid (`over` replaces fields). */
export function announcement(over: Partial<Announcement> = {}): Announcement {
  return {
    kind: "pi-context-bridge",
    protocol: BRIDGE_PROTOCOL,
    bridgeVersion: BRIDGE_VERSION,
    piVersion: "1.6.0",
    pid: process.pid,
    sessionFile: "/s.jsonl",
    socket: "/x.sock",
    token: "ab".repeat(32),
    startedAt: 1,
    ...over,
  };
}
