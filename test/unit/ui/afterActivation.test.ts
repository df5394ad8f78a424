/**
 * `afterActivation` (src/ui/afterActivation.ts): the task runs once, after the code on the stack returned
 * (not during it), and a disposed task never runs.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { afterActivation } from "../../../src/ui/afterActivation";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("afterActivation", () => {
  it("runs the task once, after the current call stack", async () => {
    const order: string[] = [];
    afterActivation(() => order.push("task"));
    order.push("rest of activate()");
    await Promise.resolve();
    assert.deepEqual(order, ["rest of activate()"], "not in a microtask either");
    await turn();
    await turn();
    assert.deepEqual(order, ["rest of activate()", "task"]);
  });

  it("a disposed task does not run; disposing after it ran is harmless", async () => {
    let runs = 0;
    afterActivation(() => runs++).dispose();
    const ran = afterActivation(() => runs++);
    await turn();
    await turn();
    ran.dispose();
    assert.equal(runs, 1);
  });
});
