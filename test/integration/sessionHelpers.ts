// Helpers for the session and status-bar suites: the extension's API, temp agent dirs selected
// through the `piContext.agentDir` setting, and pi-format entries to write and append.
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import type { PiContextApi } from "../../src/extension";
import type { CurrentSession } from "../../src/services";
import type { OpenPrompt } from "../../src/ui/prompter";
import { assistantMessage as builtAssistant } from "../support/session-builder";
import { EXTENSION_ID, encodeSessionDirName, repoRoot, testWorkspace } from "./env";

/** The running extension's API (activates it). */
export async function piApi(): Promise<PiContextApi> {
  const ext = vscode.extensions.getExtension<PiContextApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed`);
  const api = await ext.activate();
  assert.ok(api?.services, "activate() did not return { services }");
  return api;
}

/** Set a `piContext.*` setting in the user settings (undefined = remove). */
export async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration("piContext").update(key, value, vscode.ConfigurationTarget.Global);
}

/** A fresh temp pi agent dir (with `sessions/`), optionally with a fixture's settings/models. */
export function makeAgentDir(configFrom?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-agent-"));
  fs.mkdirSync(path.join(dir, "sessions"));
  if (configFrom)
    for (const f of fs.readdirSync(configFrom))
      if (f.endsWith(".json")) fs.copyFileSync(path.join(configFrom, f), path.join(dir, f));
  return dir;
}

/** `<agentDir>/sessions/--<cwd>--`. */
export function sessionDir(agentDir: string, cwd = testWorkspace()): string {
  return path.join(agentDir, "sessions", encodeSessionDirName(cwd));
}

/** Shared fixture paths (`test/fixtures/pi-1.6.0/<name>.jsonl` and its `.agent/`). */
export function fixture(name: string): { jsonl: string; agent: string; oracle: string } {
  const base = path.join(repoRoot, "test", "fixtures", "pi-1.6.0", name);
  return { jsonl: `${base}.jsonl`, agent: `${base}.agent`, oracle: `${base}.oracle.json` };
}

/** Copy a session file into `<agentDir>/sessions/--<cwd>--/`, rewriting the header `cwd` in the copy. */
export function installSession(
  agentDir: string,
  source: string,
  fileName = path.basename(source),
  cwd = testWorkspace(),
): string {
  const text = fs.readFileSync(source, "utf8");
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl));
  header.cwd = cwd;
  const dir = sessionDir(agentDir, cwd);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, fileName);
  fs.writeFileSync(file, JSON.stringify(header) + text.slice(nl));
  return file;
}

let counter = 0;
/** A short unique entry id. */
export function newId(): string {
  counter++;
  return (Date.now().toString(16) + counter.toString(16)).slice(-8);
}

/** pi's session header. */
export function header(cwd = testWorkspace(), id = `test-${newId()}`): object {
  return { type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd };
}

/** A model_change entry. */
export function modelChange(
  id: string,
  parentId: string | null,
  provider = "anthropic",
  modelId = "claude-sonnet-4-5",
): object {
  return { type: "model_change", id, parentId, timestamp: new Date().toISOString(), provider, modelId };
}

/** A user message entry. */
export function userMessage(id: string, parentId: string | null, text: string): object {
  return {
    type: "message",
    id,
    parentId,
    timestamp: new Date().toISOString(),
    message: { role: "user", content: [{ type: "text", text }], timestamp: Date.now() },
  };
}

/** An assistant message entry with `usage` (input + output + cache = totalTokens). */
export function assistantMessage(
  id: string,
  parentId: string | null,
  text: string,
  totalTokens: number,
  model = { provider: "anthropic", model: "claude-sonnet-4-5" },
): object {
  return {
    type: "message",
    id,
    parentId,
    timestamp: new Date().toISOString(),
    message: {
      ...builtAssistant({ text, api: "anthropic-messages", ...model, usage: { input: totalTokens - 10, output: 10 } }),
      timestamp: Date.now(),
    },
  };
}

/** JSONL text of entries. */
export function jsonl(entries: object[]): string {
  return entries.map((e) => JSON.stringify(e)).join("\n") + "\n";
}

/** A small session: header, model_change, one user + assistant turn with `totalTokens` usage. Returns [text, leafId]. */
export function smallSession(
  totalTokens: number,
  firstMessage = "hello",
  cwd = testWorkspace(),
): { text: string; leafId: string } {
  const m = newId();
  const u = newId();
  const a = newId();
  return {
    text: jsonl([
      header(cwd),
      modelChange(m, null),
      userMessage(u, m, firstMessage),
      assistantMessage(a, u, "hi", totalTokens),
    ]),
    leafId: a,
  };
}

/** The largest event-loop stall seen in this extension host (ms), for failure messages. */
const lag = { max: 0, at: "" };
let lastTick = Date.now();
setInterval(() => {
  const now = Date.now();
  const gap = now - lastTick - 20;
  if (gap > lag.max) {
    lag.max = gap;
    lag.at = new Date(now).toISOString();
  }
  lastTick = now;
}, 20).unref?.();

/** Resolve when `check(current)` holds (checked now and after every change), else reject after `timeoutMs`. */
export function whenSession(
  api: PiContextApi,
  check: (c: CurrentSession | undefined) => boolean,
  timeoutMs = 5000,
  what = "session state",
): Promise<CurrentSession | undefined> {
  const sessions = api.services.sessions;
  if (check(sessions.current)) return Promise.resolve(sessions.current);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      const c = sessions.current;
      const state = {
        ...((sessions as { debugState?: () => Record<string, unknown> }).debugState?.() ?? {}),
        maxEventLoopLagMs: lag.max,
        lagAt: lag.at,
      };
      reject(
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; current: ${c ? `${c.file} (${c.session.records.length} entries, pinned ${c.pinned})` : "none"}; source: ${JSON.stringify(state)}`,
        ),
      );
    }, timeoutMs);
    const sub = sessions.onDidChange((c) => {
      if (check(c)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(c);
      }
    });
  });
}

/** Point the extension at `agentDir` and wait until discovery ran there. */
export async function useAgentDir(api: PiContextApi, agentDir: string | undefined): Promise<void> {
  await setSetting("agentDir", agentDir);
  const want = agentDir ?? process.env.PI_CODING_AGENT_DIR;
  await waitForCondition(
    () => api.services.sessions.agentDir() === want && api.services.sessions.discovery?.agentDir === want,
    5000,
    `agent dir ${want}`,
  );
  await api.services.sessions.refresh();
}

/** Poll a condition (every 20 ms). */
export async function waitForCondition(check: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Make a file's mtime later than every other file's, so "most recently written" is unambiguous. */
export function touchLater(file: string, secondsAhead = 2): void {
  const t = new Date(Date.now() + secondsAhead * 1000);
  fs.utimesSync(file, t, t);
}

/**
 * Accept the quick pick item whose label matches, as a user would (move to it, press Enter): the
 * questions of the tree, trim and the other `Prompter` surfaces.
 */
export async function choosePick(prompt: OpenPrompt, label: RegExp): Promise<void> {
  assert.strictEqual(prompt.kind, "pick");
  if (prompt.kind !== "pick") return;
  const item = prompt.quickPick.items.find((i) => label.test(i.label));
  assert.ok(item, `no item ${label} in ${prompt.quickPick.items.map((i) => i.label).join(" | ")}`);
  // the extension host sends the new active item on its next tick: wait until the workbench has it
  const moved = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      sub.dispose();
      resolve();
    }, 1500);
    const sub = prompt.quickPick.onDidChangeActive((active) => {
      if (active[0] !== item) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
  prompt.quickPick.activeItems = [item];
  await moved;
  await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
}
