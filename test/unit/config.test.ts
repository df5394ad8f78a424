/**
 * Untrusted workspaces (issue 16, item 14): every `piContext.*` setting that changes where we
 * read, write or connect, what we send where, or weakens a guard is a restricted configuration
 * (VS Code then ignores its workspace value in an untrusted workspace); every other setting is
 * listed here with the reason it is harmless. A new setting fails this test until it is classified.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../support/paths";

/** Settings a cloned repository may set: they only change how things look or how often we look. */
const HARMLESS: Record<string, string> = {
  "piContext.statusBar.alignment": "where the gauge sits",
  "piContext.statusBar.priority": "where the gauge sits",
  "piContext.warning.enabled": "whether a warning toast is shown",
  "piContext.warning.margin": "when the gauge turns to the warning colour",
  "piContext.pollIntervalMs": "how often the session folder is polled (minimum 100 ms)",
  "piContext.summarizer.openai.maxOutputTokens":
    "the output limit of a request to the user's own server (fitted to its window)",
  "piContext.summarizer.openai.stream": "streamed or not, same server, same request",
  "piContext.gauge.colors": "which colour scheme the gauge uses (threshold or pi's footer colours)",
};

/** The ones the issue names, and the rest of the kind. */
const MUST_BE_RESTRICTED = [
  "piContext.agentDir", // where sessions, settings and the live dir are read (and written)
  "piContext.sessionDirs", // more folders read, and written by compaction / switch
  "piContext.includeSubfolderSessions", // which sessions are read and offered for writing
  "piContext.projectSettings", // whether the repository's .pi/settings.json decides reserve / keep
  "piContext.summarizer.provider", // which service gets the conversation
  "piContext.summarizer.openai.baseURL", // where the conversation and the API key go
  "piContext.summarizer.openai.model", // on a router, which upstream provider gets it
  "piContext.summarizer.openai.contextWindow", // 0 turns the size check off
  "piContext.summarizer.vscodeLm.vendor", // which VS Code language model gets the conversation
  "piContext.summarizer.vscodeLm.family",
  "piContext.compaction.skipPreview", // the confirmation before anything is sent or written
  "piContext.liveSession.guardSeconds", // the guard against writing under a running pi
  "piContext.liveBridge.enabled", // connecting to a running pi's socket (or not)
];

describe("untrusted workspaces", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const config = pkg.contributes.configuration;
  const settings = (Array.isArray(config) ? config : [config]).flatMap((c: { properties: object }) =>
    Object.keys(c.properties),
  );
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;

  it("every setting is either restricted or known to be harmless", () => {
    const unclassified = settings.filter((s: string) => !restricted.includes(s) && !(s in HARMLESS));
    assert.deepEqual(unclassified, [], "classify each new setting: restricted, or harmless with a reason");
    for (const s of restricted) assert.ok(settings.includes(s), `${s} is restricted but not a setting`);
    for (const s of Object.keys(HARMLESS)) assert.ok(!restricted.includes(s), `${s} is both`);
  });

  it("what changes where we read, write or connect, or weakens a guard, is restricted", () => {
    assert.deepEqual(
      MUST_BE_RESTRICTED.filter((s) => !restricted.includes(s)),
      [],
    );
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
  });

  it("the settings are read with get() only (VS Code applies the restriction there, not in inspect())", () => {
    const src = fs.readFileSync(path.join(REPO_ROOT, "src/config.ts"), "utf8");
    assert.doesNotMatch(src, /\.inspect\(/);
    for (const dir of ["sessions", "statusBar", "panel", "tree", "compaction", "summarizers", "liveBridge", "ui"]) {
      for (const f of fs.readdirSync(path.join(REPO_ROOT, "src", dir)))
        assert.doesNotMatch(
          fs.readFileSync(path.join(REPO_ROOT, "src", dir, f), "utf8"),
          /getConfiguration\([^)]*\)\.inspect|workspaceValue/,
          `${dir}/${f}`,
        );
    }
  });
});
