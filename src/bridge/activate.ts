/**
 * The live bridge as it runs inside pi (bundled into `dist/bridge/pi-context-bridge.js`). No `vscode`.
 * pi's extension rules: no resources from the factory, so the socket opens on `session_start` and
 * closes on `session_shutdown`; a killed pi leaves stale files that every start and client clean up.
 */

import { CommandJobs } from "./commandJobs";
import { cutPreparationAt, type PiPreparation } from "./cutAt";
import type { BridgeDeps, PiApi, PiEntry } from "./piApi";
import { BRIDGE_COMMAND, BRIDGE_PROTOCOL, BRIDGE_VERSION } from "./protocol";
import { BridgeServer } from "./server";

const ACTIVE_KEY = Symbol.for("pi-context.bridge.active");
type GlobalWithBridge = typeof globalThis & { [ACTIVE_KEY]?: object };

/** Register the `/pi-context-bridge` command and the session events. */
export function activateBridge(pi: PiApi, deps: BridgeDeps): void {
  let server: BridgeServer | undefined;
  let lastProblem: string | undefined;
  const commandJobs = new CommandJobs(pi);

  pi.registerCommand(BRIDGE_COMMAND, {
    description:
      "pi-context live bridge: show its status (VS Code's pi-context extension also runs its requests through this command)",
    handler: async (args, ctx) => {
      const m = /^run ([0-9a-f]{32})$/.exec(args.trim());
      if (m) {
        await commandJobs.runJob(m[1]!, ctx);
        return;
      }
      const text = server
        ? server.describe()
        : `pi-context live bridge ${BRIDGE_VERSION} (protocol ${BRIDGE_PROTOCOL}): not listening${lastProblem ? ` — ${lastProblem}` : " (no session file: pi runs without a session?)"}.`;
      ctx.ui?.notify(text, "info");
    },
  });

  pi.on("session_start", async (_event, ctx) => {
    const g = globalThis as GlobalWithBridge;
    if (g[ACTIVE_KEY]) {
      lastProblem = "another copy of the bridge is active in this pi";
      return;
    }
    const file = ctx.sessionManager.getSessionFile();
    if (!file) {
      lastProblem = "this pi runs without a session file";
      return;
    }
    const instance = new BridgeServer(pi, ctx, deps, commandJobs.withCommandContext);
    g[ACTIVE_KEY] = instance;
    try {
      await instance.start(file);
      server = instance;
      lastProblem = undefined;
    } catch (error) {
      lastProblem = `could not start: ${(error as Error).message}`;
      deps.log?.(lastProblem);
      instance.dispose();
      if (g[ACTIVE_KEY] === instance) delete g[ACTIVE_KEY];
    }
  });

  pi.on("session_shutdown", async () => {
    commandJobs.cancelOwnJobs();
    const g = globalThis as GlobalWithBridge;
    if (server) {
      server.dispose();
      if (g[ACTIVE_KEY] === server) delete g[ACTIVE_KEY];
      server = undefined;
    }
  });

  const push = (mark?: (s: BridgeServer) => void) => () => {
    if (!server) return;
    mark?.(server);
    server.schedulePush();
  };
  for (const event of [
    "turn_end",
    "agent_start",
    "agent_settled",
    "model_select",
    "thinking_level_select",
    "session_info_changed",
  ])
    pi.on(event, push());
  const boundary = (event: { entries?: unknown[] }) => server?.edits.boundary(event);
  pi.on("turn_end", boundary);
  pi.on("agent_before_settle", boundary);
  for (const event of ["turn_start", "message_start", "agent_settled"])
    pi.on(event, () => {
      if (server?.edits.pending) server.edits.check(true);
    });
  pi.on("message_end", (event: { message?: { role?: string } }) => {
    if (event?.message?.role === "assistant") push()();
  });
  pi.on(
    "session_before_compact",
    push((s) => (s.compacting = true)),
  );
  // "Compact up to here": move pi's own cut to the entry asked for (pi still summarizes)
  pi.on("session_before_compact", (event: { preparation?: PiPreparation; reason?: string }, ctx) => {
    const running = server?.running;
    if (running?.kind !== "compact" || running.keepFrom === undefined) return undefined;
    if (event?.reason !== "manual" || !event.preparation) return undefined;
    const cut = cutPreparationAt(
      event.preparation,
      ctx.sessionManager.buildSessionProjection().entries,
      running.keepFrom,
    );
    if (!("error" in cut)) return undefined;
    running.cutError = cut.error;
    return { cancel: true };
  });
  pi.on("session_compact", (event: { compactionEntry?: PiEntry; reason?: string }) => {
    if (!server) return;
    server.compacting = false;
    if (server.running?.kind === "compact" && event?.reason === "manual" && event.compactionEntry)
      server.running.compactionEntry = event.compactionEntry;
    server.schedulePush();
  });
  pi.on("session_compact_failed", (event: Parameters<BridgeServer["recordCompactionFailure"]>[0]) =>
    push((s) => {
      s.compacting = false;
      s.recordCompactionFailure(event);
    })(),
  );
  pi.on(
    "session_before_compact",
    (event: { reason?: string; preparation?: { firstKeptEntryId?: string; tokensBefore?: number } }) =>
      server?.provideCompaction(event),
  );
  pi.on(
    "session_before_tree",
    push((s) => (s.navigating = true)),
  );
  pi.on(
    "session_tree",
    push((s) => (s.navigating = false)),
  );
}
