/**
 * Entry point of the pi extension that esbuild bundles to `dist/bridge/pi-context-bridge.js`
 * (ESM; `@earendil-works/pi-coding-agent` stays external: pi maps it to its own copy). pi loads
 * the file from `<agentDir>/extensions/` (or `pi -e <file>`); see `activate.ts` for what it does.
 */

import { getAgentDir, SettingsManager, VERSION } from "@earendil-works/pi-coding-agent";
import { activateBridge } from "./activate";
import type { PiApi } from "./piApi";

/** pi's extension factory. */
export default function piContextBridge(pi: PiApi): void {
  activateBridge(pi, {
    piVersion: VERSION,
    agentDir: () => getAgentDir(),
    settingsFor: (settings, model) => {
      const manager = SettingsManager.inMemory(settings);
      return { compaction: manager.getCompactionSettings(model), branchSummary: manager.getBranchSummarySettings() };
    },
    ...(process.env.PI_CONTEXT_BRIDGE_DEBUG
      ? { log: (message: string) => process.stderr.write(`[pi-context-bridge] ${message}\n`) }
      : {}),
  });
}
