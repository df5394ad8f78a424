// The part of pi's package (`@earendil-works/pi-coding-agent` 1.6.0, `dist/index.d.ts`) the
// bridge imports. The package is not a dependency of this repository: pi provides it to the
// extensions it loads. Only `src/bridge/piExtension.ts` imports it.
declare module "@earendil-works/pi-coding-agent" {
  export const VERSION: string;
  export function getAgentDir(): string;
  export class SettingsManager {
    static inMemory(settings?: Record<string, unknown>): SettingsManager;
    getCompactionSettings(model?: { provider: string; id: string }): {
      enabled: boolean;
      reserveTokens: number;
      keepRecentTokens: number;
    };
    getBranchSummarySettings(): { reserveTokens: number; skipPrompt: boolean };
  }
}
