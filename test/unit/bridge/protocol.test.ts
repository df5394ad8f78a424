/**
 * The protocol's version rule for "Compact up to here": only a bridge of 1.3.0 or later moves pi's
 * cut for `compact`'s `keepFrom`; an older one would ignore the parameter and compact at pi's own
 * cut, so clients must not send it one.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { BRIDGE_VERSION, bridgeSupportsKeepFrom, KEEP_FROM_BRIDGE_VERSION } from "../../../src/bridge/protocol";

describe("bridgeSupportsKeepFrom", () => {
  it("from 1.3.0 on, numerically (not as text)", () => {
    assert.equal(KEEP_FROM_BRIDGE_VERSION, "1.3.0");
    assert.equal(bridgeSupportsKeepFrom(BRIDGE_VERSION), true);
    for (const v of ["1.3.0", "1.3.1", "1.10.0", "2.0.0", "10.0.0"]) assert.equal(bridgeSupportsKeepFrom(v), true, v);
    for (const v of ["1.2.0", "1.2.9", "1.0.0", "0.9.0", "garbage", ""])
      assert.equal(bridgeSupportsKeepFrom(v), false, v);
  });
});
