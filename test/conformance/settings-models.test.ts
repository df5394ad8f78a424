/**
 * Settings and model windows against pi 1.6.0 itself, on random configurations (fast-check; the
 * property is test/support/settings-models.ts, which the version matrix runs against every pi).
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { settingsModelsProperty, type SettingsOracle } from "../support/settings-models";
import { REPO_ROOT } from "../support/paths";

const RUNS = Number(process.env.PI_CONTEXT_SETTINGS_RUNS ?? 250);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-settings-"));
let oracle: SettingsOracle & { close(): Promise<void> };
before(async () => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "test/conformance/oracle/oracle-client.mjs")).href)) as {
    OracleClient: { start(): Promise<SettingsOracle & { close(): Promise<void> }> };
  };
  oracle = await mod.OracleClient.start();
});
after(async () => {
  await oracle?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe(`settings and model windows agree with pi 1.6.0 on ${RUNS} random configurations`, () => {
  it("compaction settings (values and errors) and context windows", async () => {
    await fc.assert(settingsModelsProperty(oracle, tmp), {
      numRuns: RUNS,
      endOnFailure: true,
      includeErrorInReport: true,
    });
  });
});
