// Preloaded into every `node --test` run (scripts/node-test.mjs): one fast-check seed for all
// property tests, so a run is reproducible and CI is deterministic.
//   PI_CONTEXT_SEED=<int>     replay a run (fast-check prints the seed and path of a failure)
//   PI_CONTEXT_SEED=random    a new seed each run (npm run test:long)
//   PI_CONTEXT_PATH=<path>    with the seed, replay only the failing case
// Default: a fixed seed.
"use strict";
const fc = require("fast-check");
const raw = process.env.PI_CONTEXT_SEED ?? "20261201";
const seed = raw === "random" ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : Number(raw);
if (!Number.isInteger(seed))
  throw new Error(`PI_CONTEXT_SEED must be an integer or "random", got ${JSON.stringify(raw)}`);
const config = { seed };
if (process.env.PI_CONTEXT_PATH) config.path = process.env.PI_CONTEXT_PATH;
fc.configureGlobal({ ...fc.readConfigureGlobal(), ...config });
if (raw === "random") process.stderr.write(`[fast-check] PI_CONTEXT_SEED=${seed}\n`);
