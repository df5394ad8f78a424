/**
 * A command context (pi's `ExtensionCommandContext`, where `ctx.navigateTree()` lives) for an
 * operation: the bridge sends its own `/pi-context-bridge run <nonce>`, resolved through
 * `pi.getCommands()` first so the text can never reach the model as a prompt.
 */

import { randomHex } from "./announce";
import { OpError, type WithCommandContext } from "./operations";
import type { PiApi, PiCommandContext } from "./piApi";
import { BRIDGE_COMMAND } from "./protocol";

const JOBS_KEY = Symbol.for("pi-context.bridge.jobs");
type GlobalWithJobs = typeof globalThis & { [JOBS_KEY]?: Map<string, Job> };

const COMMAND_START_TIMEOUT_MS = 15_000;

interface Job {
  started: boolean;
  run(ctx: PiCommandContext): Promise<void>;
  fail(error: OpError): void;
  timer: NodeJS.Timeout;
}

/** Shared by every copy of the bridge in this process: pi names duplicates `:1`/`:2`, and any may run. */
function sharedJobs(): Map<string, Job> {
  const g = globalThis as GlobalWithJobs;
  return (g[JOBS_KEY] ??= new Map<string, Job>());
}

function resolveInvocation(pi: PiApi): string | undefined {
  let commands: ReturnType<PiApi["getCommands"]>;
  try {
    commands = pi.getCommands();
  } catch {
    return undefined;
  }
  const ours = commands.filter(
    (c) =>
      (c.source === undefined || c.source === "extension") &&
      (c.name === BRIDGE_COMMAND || c.name.startsWith(`${BRIDGE_COMMAND}:`)),
  );
  return ours.find((c) => c.name === BRIDGE_COMMAND)?.name ?? ours[0]?.name;
}

/** The command jobs of one bridge copy (in the process-wide map), from dispatch to run. */
export class CommandJobs {
  private readonly jobs = sharedJobs();
  private readonly ownJobs = new Set<string>();

  constructor(private readonly pi: PiApi) {}

  /**
   * @throws {OpError} `unavailable` when pi does not list or run our command within 15 s;
   *   `cancelled` when pi shuts the session down first; else what `run` throws.
   */
  readonly withCommandContext: WithCommandContext = <T>(run: (ctx: PiCommandContext) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const { pi, jobs, ownJobs } = this;
      const invocation = resolveInvocation(pi);
      if (!invocation) {
        reject(
          new OpError(
            "unavailable",
            `pi does not list the /${BRIDGE_COMMAND} command of this bridge (loaded twice?); cannot navigate from here.`,
          ),
        );
        return;
      }
      const nonce = randomHex(16);
      const job: Job = {
        started: false,
        run: async (ctx) => {
          try {
            resolve(await run(ctx));
          } catch (error) {
            reject(error);
          }
        },
        fail: (error) => reject(error),
        timer: setTimeout(() => {
          ownJobs.delete(nonce);
          if (jobs.delete(nonce))
            reject(
              new OpError("unavailable", `pi did not run /${invocation} within ${COMMAND_START_TIMEOUT_MS / 1000} s.`),
            );
        }, COMMAND_START_TIMEOUT_MS),
      };
      jobs.set(nonce, job);
      ownJobs.add(nonce);
      try {
        pi.sendUserMessage(`/${invocation} run ${nonce}`, { expandPromptTemplates: true });
      } catch (error) {
        jobs.delete(nonce);
        ownJobs.delete(nonce);
        clearTimeout(job.timer);
        reject(new OpError("unavailable", `pi refused the bridge command: ${(error as Error).message}`));
      }
    });

  runJob(nonce: string, ctx: PiCommandContext): Promise<void> {
    const job = this.jobs.get(nonce);
    if (!job) {
      ctx.ui?.notify("pi-context bridge: unknown or expired request.", "warning");
      return Promise.resolve();
    }
    this.jobs.delete(nonce);
    this.ownJobs.delete(nonce);
    clearTimeout(job.timer);
    job.started = true;
    return job.run(ctx);
  }

  cancelOwnJobs(): void {
    const { jobs, ownJobs } = this;
    for (const nonce of ownJobs) {
      const job = jobs.get(nonce);
      jobs.delete(nonce);
      if (!job) continue;
      clearTimeout(job.timer);
      job.fail(new OpError("cancelled", "pi is shutting this session down."));
    }
    ownJobs.clear();
  }
}
