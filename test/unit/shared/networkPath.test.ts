/**
 * Which paths a Windows host must never stat (issue 16, item 15): UNC and device paths and
 * `file://host/` URLs from a session would make Windows connect to that server over SMB and offer
 * the user's credentials. Pure logic, so every case runs on any platform.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { isNetworkPath } from "../../../src/shared/untrusted";

describe("network paths (Windows)", () => {
  const network = [
    "\\\\server\\share\\src\\a.ts",
    "\\\\evil.example@SSL\\DavWWWRoot\\x",
    "//server/share/a.ts",
    "\\/server/share",
    "\\\\?\\UNC\\server\\share\\a.ts",
    "\\\\.\\pipe\\openssh-ssh-agent",
    "\\\\?\\GLOBALROOT\\Device\\Mup\\server\\share",
    "\\\\10.0.0.1\\c$\\Windows",
    "  \\\\server\\share",
    "file://server/share/a.ts",
    "FILE://SERVER/share",
    "file:////server/share/a.ts",
    "file://///server/share",
    "file:\\\\server\\share",
  ];
  const local = [
    "C:\\repo\\src\\a.ts",
    "c:/repo/src/a.ts",
    "\\repo\\a.ts",
    "src\\a.ts",
    "a.ts",
    "\\\\?\\C:\\very\\long\\path.ts",
    "\\\\.\\C:\\x",
    "file:///C:/repo/a.ts",
    "file:///repo/a.ts",
    "file://localhost/C:/repo/a.ts",
    "file:/C:/repo",
    "@src/a.ts",
    "~/a.ts",
  ];
  it("UNC, device and file://host paths are network paths; drive, rooted and relative paths are not", () => {
    for (const p of network) assert.equal(isNetworkPath(p, "win32"), true, p);
    for (const p of local) assert.equal(isNetworkPath(p, "win32"), false, p);
  });

  it("elsewhere every path is local (POSIX has no UNC; //x is /x)", () => {
    for (const p of [...network, ...local]) {
      assert.equal(isNetworkPath(p, "linux"), false, p);
      assert.equal(isNetworkPath(p, "darwin"), false, p);
    }
  });
});
