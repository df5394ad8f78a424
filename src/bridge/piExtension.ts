/** Entry of `dist/bridge/pi-context-bridge.js` (ESM); pi maps its package to its own copy. */

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
