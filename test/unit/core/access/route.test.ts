/**
 * The route chooser (`core/access/route.ts`): the bridge when pi has the session open with it, our
 * file flow when nobody has, else a refusal with the ways out — *Anyway* only against evidence
 * that is probable or possible, never against a bridge-confirmed pi.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Evidence, SessionAccess } from "../../../../src/core/access/access";
import { ACTIONS, chooseRoute } from "../../../../src/core/access/route";

function access(...evidence: Evidence[]): SessionAccess {
  return {
    file: "/s/a.jsonl",
    evidence,
    strength: evidence[0]?.strength ?? "none",
    processChecked: true,
    ownLastWrite: false,
  };
}
const bridge: Evidence = { kind: "bridge", strength: "certain", pid: 100, piVersion: "1.6.0" };
const process: Evidence = { kind: "process", strength: "probable", pid: 200, command: "pi", how: "started-here" };
const folder: Evidence = { kind: "process", strength: "possible", pid: 300, command: "pi", how: "in-folder" };
const write: Evidence = { kind: "recent-write", strength: "possible", ageSeconds: 2, guardSeconds: 30 };

describe("the route of an action", () => {
  it("nobody has it open: our file flow", () => {
    assert.deepEqual(chooseRoute(ACTIONS.compact, access()), { kind: "file", access: access(), forced: false });
  });

  it("a pi with the bridge: that pi does it; --force never bypasses it", () => {
    for (const action of [
      ACTIONS.compact,
      ACTIONS.compactUpToHere,
      ACTIONS.summarize,
      ACTIONS.switch,
      ACTIONS.label,
      ACTIONS.name,
      ACTIONS.contextEdit,
      ACTIONS.repair,
    ]) {
      assert.equal(chooseRoute(action, access(bridge, write)).kind, "bridge", action.id);
      assert.equal(chooseRoute(action, access(bridge), { force: true }).kind, "bridge", action.id);
    }
  });

  it("a pi with the bridge, an action its bridge cannot do: refused, not overridable, do it in pi", () => {
    const route = chooseRoute(ACTIONS.repairLeaf, access(bridge), { force: true, terminalPids: new Set([100]) });
    assert.deepEqual(route.kind === "refuse" && [route.overridable, route.offers], [false, ["in-pi", "show-terminal"]]);
  });

  it("a pi the table ties to it: refused with Anyway; the bridge offered (install it, or reload that pi)", () => {
    const installed = chooseRoute(ACTIONS.compact, access(process), { bridgeInstalled: true });
    assert.deepEqual(installed.kind === "refuse" && [installed.overridable, installed.offers], [
      true,
      ["anyway", "reload-pi"],
    ]);
    const missing = chooseRoute(ACTIONS.compact, access(process), { bridgeInstalled: false });
    assert.deepEqual(missing.kind === "refuse" && missing.offers, ["anyway", "install-bridge"]);
    assert.deepEqual(chooseRoute(ACTIONS.compact, access(process), { force: true }), {
      kind: "file",
      access: access(process),
      forced: true,
    });
  });

  it("an action the bridge cannot do (resume in a second pi, a repair that moves the leaf): no bridge offered", () => {
    for (const action of [ACTIONS.resume, ACTIONS.repairLeaf]) {
      for (const bridgeInstalled of [true, false]) {
        const r = chooseRoute(action, access(process), { bridgeInstalled, terminalPids: new Set([200]) });
        assert.deepEqual(r.kind === "refuse" && [r.overridable, r.offers], [true, ["anyway", "show-terminal"]]);
        const w = chooseRoute(action, access(write), { bridgeInstalled });
        assert.deepEqual(w.kind === "refuse" && w.offers, ["anyway"], action.id);
      }
      assert.deepEqual(chooseRoute(action, access()).kind, "file");
      assert.deepEqual(chooseRoute(action, access(process), { force: true }).kind, "file");
    }
  });

  it("a possible pi or a recent write: refused with Anyway; the pi's terminal when it runs in one", () => {
    const r = chooseRoute(ACTIONS.contextEdit, access(folder, write), { terminalPids: new Set([300]) });
    assert.deepEqual(r.kind === "refuse" && r.offers, ["anyway", "reload-pi", "show-terminal"]);
    const w = chooseRoute(ACTIONS.contextEdit, access(write), { bridgeInstalled: false });
    assert.deepEqual(w.kind === "refuse" && w.offers, ["anyway", "install-bridge"]);
    assert.equal(chooseRoute(ACTIONS.contextEdit, access(write), { force: true }).kind, "file");
  });
});
