/**
 * Fuzzing the session doctor: random sessions with damage and hand edits (test/support/
 * mutate-session.ts) never make the doctor or the repair planner throw or hang, the report is
 * plain, well-formed data, and every repair proves itself (no repairable error left, on the overlay
 * and on the text read back). Runs in a worker: a case that takes longer than HANG_MS without
 * finishing stops the run and fails with that case.
 *
 * Runs: PI_CONTEXT_DOCTOR_FUZZ_RUNS (default 400; `npm run test:long` uses 10000); seed
 * PI_CONTEXT_DOCTOR_FUZZ_SEED.
 */

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import { describe, it } from "node:test";

const RUNS = Number(process.env.PI_CONTEXT_DOCTOR_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.PI_CONTEXT_DOCTOR_FUZZ_SEED ?? Date.now() % 1_000_000);
/** A case that has not finished after this long counts as a hang. */
const HANG_MS = 20_000;

describe("doctor fuzz", () => {
  it(`never throws or hangs on ${RUNS} random, damaged sessions (seed ${SEED})`, async () => {
    const worker = new Worker(path.join(__dirname, "../../../support/doctor-fuzz-worker.js"), {
      workerData: { runs: RUNS, seed: SEED },
    });
    const result = await new Promise<{ stats?: Record<string, unknown>; failure?: string }>((resolve) => {
      let last: unknown;
      let timer = setTimeout(() => hang(), HANG_MS);
      const hang = () => {
        void worker.terminate();
        resolve({ failure: `a case did not finish within ${HANG_MS} ms: ${JSON.stringify(last).slice(0, 4000)}` });
      };
      worker.on(
        "message",
        (m: {
          progress?: number;
          case?: unknown;
          done?: boolean;
          stats?: Record<string, unknown>;
          failure?: string;
        }) => {
          if (m.progress !== undefined) {
            last = m.case;
            clearTimeout(timer);
            timer = setTimeout(hang, HANG_MS);
          } else {
            clearTimeout(timer);
            void worker.terminate();
            resolve(m.done ? { stats: m.stats! } : { failure: m.failure ?? "unknown failure" });
          }
        },
      );
      worker.on("error", (error) => {
        clearTimeout(timer);
        resolve({ failure: error.stack ?? String(error) });
      });
    });
    assert.equal(result.failure, undefined, result.failure);
    console.log(`doctor fuzz (seed ${SEED}): ${JSON.stringify(result.stats)}`);
    const stats = result.stats as { cases: number; repaired: number; codes: Record<string, number> };
    assert.equal(stats.cases, RUNS);
    assert.ok(stats.repaired > 0, "some cases were repaired");
    assert.ok(Object.keys(stats.codes).length >= 15, `many kinds of findings: ${Object.keys(stats.codes).join(", ")}`);
  });
});
