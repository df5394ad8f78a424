#!/usr/bin/env node
// What a Node process holds, not what it has not collected yet: `node --experimental-websocket
// scripts/heap-after-gc.mjs <pid>` opens the process's inspector (SIGUSR1, 127.0.0.1:9229), runs a
// full garbage collection there (CDP `HeapProfiler.collectGarbage`), prints one JSON line —
// `{ pid, before, after }`, each `process.memoryUsage()` plus `vmRssKB` (/proc/<pid>/status) —
// and closes the inspector again. Used by `npm run bench:ui` on the window's extension host.
// Exit 1 (with the reason on stderr) when the inspector cannot be reached or is another process's.
/* global WebSocket -- Node 20 with --experimental-websocket */
import { readFileSync } from "node:fs";

const pid = Number(process.argv[2]);
const PORT = 9229;

const vmRssKB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function target() {
  for (let i = 0; i < 50; i++) {
    try {
      const list = await (await fetch(`http://127.0.0.1:${PORT}/json/list`)).json();
      if (list[0]?.webSocketDebuggerUrl) return list[0].webSocketDebuggerUrl;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`no inspector on port ${PORT} after SIGUSR1`);
}

async function main() {
  process.kill(pid, "SIGUSR1");
  const ws = new WebSocket(await target());
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("inspector connection failed"));
  });
  let next = 1;
  const pending = new Map();
  ws.onmessage = (event) => {
    const msg = JSON.parse(String(event.data));
    if (msg.id && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  };
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async (expression) =>
    (await call("Runtime.evaluate", { expression, includeCommandLineAPI: true, returnByValue: true })).result?.result
      ?.value;
  const memory = async () => ({
    ...JSON.parse(await evaluate("JSON.stringify(process.memoryUsage())")),
    vmRssKB: vmRssKB(),
  });
  const remotePid = await evaluate("process.pid");
  if (remotePid !== pid) throw new Error(`port ${PORT} is process ${remotePid}'s inspector, not ${pid}'s`);
  const before = await memory();
  await call("HeapProfiler.collectGarbage");
  await call("HeapProfiler.collectGarbage");
  await sleep(500); // let the allocator give freed pages back
  const after = await memory();
  ws.send(
    JSON.stringify({
      id: next++,
      method: "Runtime.evaluate",
      params: { expression: "require('node:inspector').close()", includeCommandLineAPI: true },
    }),
  );
  await sleep(200);
  ws.close();
  console.log(JSON.stringify({ pid, before, after }));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(String(error?.message ?? error));
    process.exit(1);
  },
);
