/**
 * Session discovery without VS Code: agent dir rule, folder plans (env/setting overrides, extra
 * dirs, sub-folders, no workspace), header probing, the incremental scanner, QuickPick rows.
 */

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { encodeSessionDirName } from "../../../src/core/read/locate";
import type { SessionInfo } from "../../../src/core/read/sessionInfo";
import { parseHeaderProbe, planFolders, resolveAgentDir, SessionScanner } from "../../../src/sessions/scan";
import {
  followRow,
  formatAge,
  formatBytes,
  pickRowDetail,
  PLAIN_DETAIL as PLAIN,
  projectFolderLabel,
  sessionPickRows,
} from "../../../src/sessions/picker";
import { formatDateTime, formatGaugeTokens, formatWindowTokens, plural } from "../../../src/shared/format";

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "pi-context-scan-"));
}

function header(cwd: string, id = "id"): string {
  return JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd }) + "\n";
}

describe("resolveAgentDir", () => {
  it("setting, else PI_CODING_AGENT_DIR, else ~/.pi/agent", () => {
    assert.equal(resolveAgentDir("/x/agent", { PI_CODING_AGENT_DIR: "/env" }), "/x/agent");
    assert.equal(resolveAgentDir("~/a", {}), path.join(os.homedir(), "a"));
    assert.equal(resolveAgentDir("  ", { PI_CODING_AGENT_DIR: "/env" }), "/env");
    assert.equal(resolveAgentDir("", {}), path.join(os.homedir(), ".pi", "agent"));
  });
});

describe("planFolders", () => {
  it("env override, pi's sessionDir setting (relative to the folder), default, extras", () => {
    const agent = tmp();
    fs.writeFileSync(path.join(agent, "settings.json"), JSON.stringify({ sessionDir: "rel/sessions" }));
    const [plan] = planFolders({
      agentDir: agent,
      folders: ["/w/p"],
      extraDirs: ["extra", "/abs"],
      includeSubfolders: false,
      projectSettings: "never",
      env: { PI_CODING_AGENT_SESSION_DIR: "/envdir" },
    });
    assert.deepEqual(
      plan!.dirs.map((d) => [d.dir, d.origin]),
      [
        ["/w/p/extra", "extension-setting"],
        ["/abs", "extension-setting"],
        ["/envdir", "env"],
        ["/w/p/rel/sessions", "setting"],
        [path.join(agent, "sessions", "--w-p--"), "default"],
      ],
    );
    assert.equal(plan!.subfolders, undefined);
  });

  it("reports broken pi settings without throwing", () => {
    const agent = tmp();
    fs.writeFileSync(path.join(agent, "settings.json"), "{");
    const [plan] = planFolders({
      agentDir: agent,
      folders: ["/w"],
      extraDirs: [],
      includeSubfolders: true,
      projectSettings: "never",
      env: {},
    });
    assert.equal(plan!.settingsProblems.length, 1);
    assert.match(plan!.settingsProblems[0]!.message, /Failed to parse/);
    assert.deepEqual(plan!.subfolders, { root: path.join(agent, "sessions"), prefix: "--w" });
  });

  it("no workspace: every folder under sessions/ plus absolute extras", () => {
    const plans = planFolders({
      agentDir: "/a",
      folders: [],
      extraDirs: ["/x", "rel"],
      includeSubfolders: false,
      projectSettings: "auto",
      env: {},
    });
    assert.equal(plans.length, 1);
    assert.equal(plans[0]!.index, -1);
    assert.deepEqual(
      plans[0]!.dirs.map((d) => d.dir),
      ["/x"],
    );
    assert.deepEqual(plans[0]!.subfolders, { root: "/a/sessions", prefix: "--" });
  });
});

describe("parseHeaderProbe", () => {
  it("like pi: first parsed line must be the header; blank and broken complete lines are skipped", () => {
    assert.deepEqual(parseHeaderProbe(Buffer.from(header("/w", "a")), true), {
      state: "session",
      id: "a",
      cwd: "/w",
      created: 1767225600000,
    });
    assert.deepEqual(parseHeaderProbe(Buffer.from("\n{ broken\n" + header("/w", "b")), true), {
      state: "session",
      id: "b",
      cwd: "/w",
      created: 1767225600000,
    });
    assert.deepEqual(parseHeaderProbe(Buffer.from("\ufeff" + header("/w", "c")), true), {
      state: "session",
      id: "c",
      cwd: "/w",
      created: 1767225600000,
    });
    assert.deepEqual(parseHeaderProbe(Buffer.from('{"type":"message"}\n'), true), { state: "not-session" });
    assert.deepEqual(parseHeaderProbe(Buffer.from(""), true), { state: "incomplete" });
    assert.deepEqual(parseHeaderProbe(Buffer.from(header("/w").slice(0, 30)), true), { state: "incomplete" });
  });
});

describe("SessionScanner", () => {
  it("attributes by header cwd, newest first, reads each header once, notices new, replaced and deleted files", async () => {
    const agent = tmp();
    const folder = "/work/proj";
    const dir = path.join(agent, "sessions", encodeSessionDirName(folder));
    fs.mkdirSync(dir, { recursive: true });
    const plans = planFolders({
      agentDir: agent,
      folders: [folder],
      extraDirs: [],
      includeSubfolders: false,
      projectSettings: "never",
      env: {},
    });
    const scanner = new SessionScanner();
    assert.deepEqual((await scanner.scan(plans)).sessions, []);
    const a = path.join(dir, "a.jsonl");
    const b = path.join(dir, "b.jsonl");
    const other = path.join(dir, "other.jsonl");
    fs.writeFileSync(a, header(folder, "a"));
    fs.writeFileSync(b, header(folder, "b"));
    fs.writeFileSync(other, header("/work/proj-other", "o")); // lossy folder name: same dir, other cwd
    fs.writeFileSync(path.join(dir, "notes.txt"), "x");
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(a, old, old);
    let r = await scanner.scan(plans);
    assert.deepEqual(
      r.sessions.map((s) => path.basename(s.file)),
      ["b.jsonl", "a.jsonl"],
    );
    assert.deepEqual(r.existingDirs, [dir]);
    assert.equal(scanner.headerReads, 3);
    fs.appendFileSync(a, '{"type":"message"}\n');
    r = await scanner.scan(plans);
    assert.equal(r.sessions[0]!.file, a, "appended → most recently written");
    assert.equal(scanner.headerReads, 4, "a changed file's header is read again");
    await scanner.scan(plans);
    assert.equal(scanner.headerReads, 4, "unchanged files: no reads");
    fs.writeFileSync(b, header("/elsewhere", "b2")); // rewritten in place with another cwd
    r = await scanner.scan(plans);
    assert.deepEqual(
      r.sessions.map((s) => path.basename(s.file)),
      ["a.jsonl"],
    );
    assert.equal(scanner.headerReads, 5);
    fs.rmSync(a);
    r = await scanner.scan(plans);
    assert.deepEqual(r.sessions, []);
  });

  it("sub-folder sessions live in their own --<cwd>-- folders", async () => {
    const agent = tmp();
    const folder = "/work/proj";
    const sub = path.join(agent, "sessions", encodeSessionDirName("/work/proj/pkg"));
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, "s.jsonl"), header("/work/proj/pkg"));
    const without = planFolders({
      agentDir: agent,
      folders: [folder],
      extraDirs: [],
      includeSubfolders: false,
      projectSettings: "never",
      env: {},
    });
    assert.equal((await new SessionScanner().scan(without)).sessions.length, 0);
    const withSub = planFolders({
      agentDir: agent,
      folders: [folder],
      extraDirs: [],
      includeSubfolders: true,
      projectSettings: "never",
      env: {},
    });
    assert.equal((await new SessionScanner().scan(withSub)).sessions.length, 1);
  });
});

describe("SessionScanner without a workspace", () => {
  it("lists the sessions of every folder under sessions/, whatever their cwd", async () => {
    const agent = tmp();
    for (const cwd of ["/a", "/b/c"]) {
      const dir = path.join(agent, "sessions", encodeSessionDirName(cwd));
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, "s.jsonl"), header(cwd));
    }
    fs.mkdirSync(path.join(agent, "sessions", "not-a-session-dir"));
    fs.writeFileSync(path.join(agent, "sessions", "not-a-session-dir", "x.jsonl"), header("/x"));
    const plans = planFolders({
      agentDir: agent,
      folders: [],
      extraDirs: [],
      includeSubfolders: false,
      projectSettings: "auto",
      env: {},
    });
    const r = await new SessionScanner().scan(plans);
    assert.deepEqual(r.sessions.map((s) => s.cwd).sort(), ["/a", "/b/c"]);
    assert.ok(r.sessions.every((s) => s.folderIndex === -1));
  });
});

describe("Select Session rows", () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0);
  const summary = (o: Partial<SessionInfo>): SessionInfo => ({
    file: "/d/x.jsonl",
    dev: 1,
    ino: 1,
    size: 2048,
    mtimeMs: now - 5 * 60_000,
    state: "session",
    id: "i",
    cwd: "/w",
    messageCount: 12,
    entryCount: 20,
    models: [],
    scanned: 2048,
    head: "",
    complete: true,
    ...o,
  });

  it("pi's label (name, else first message, controls → space), age, size, pi's message count, current marked", () => {
    const rows = sessionPickRows(
      [
        summary({
          file: "/d/a.jsonl",
          name: "Refactor",
          firstMessage: "please refactor the parser",
          models: ["openai/gpt-5"],
        }),
        summary({
          file: "/d/b.jsonl",
          firstMessage: "fix  the\nbug",
          size: 9 * 1024 * 1024,
          mtimeMs: now - 3 * 86400_000,
          created: "2026-05-29T12:00:00.000Z",
        }),
        summary({ file: "/d/c.jsonl", messageCount: 1, mtimeMs: now - 6 * 60_000 }),
        summary({ file: "/d/d.jsonl", size: 20 * 1024 * 1024, complete: false, mtimeMs: now - 7 * 60_000 }),
      ],
      { currentFile: "/d/b.jsonl", nowMs: now, locale: "en-US" },
    );
    assert.deepEqual(rows[0], {
      file: "/d/a.jsonl",
      label: "Refactor",
      description: "5 min ago · 2.0 KB · 12 messages",
      detail: { rest: "please refactor the parser · openai/gpt-5 · a.jsonl" },
      current: false,
      depth: 0,
    });
    assert.equal(rows[1]!.file, "/d/c.jsonl"); // newest first
    assert.equal(rows[1]!.label, "(no messages)");
    assert.equal(rows[1]!.description, "6 min ago · 2.0 KB · 1 message");
    assert.equal(rows[2]!.description, "7 min ago · 20 MB · counting…");
    const b = rows[3]!;
    assert.equal(b.label, "fix  the bug"); // pi: each control character becomes a space, no collapsing
    assert.equal(b.current, true);
    assert.match(pickRowDetail(b, PLAIN), /^current · started May 29, 2026, .* · b\.jsonl$/);
  });

  it("forks and clones under their parent (pi's /resume threads), families ordered by their newest write", () => {
    const rows = sessionPickRows(
      [
        summary({ file: "/d/child.jsonl", parentSession: "/d/root.jsonl", firstMessage: "child", mtimeMs: now - 1000 }),
        summary({ file: "/d/other.jsonl", firstMessage: "other", mtimeMs: now - 2000 }),
        summary({
          file: "/d/grandchild.jsonl",
          parentSession: "/d/child.jsonl",
          firstMessage: "grandchild",
          mtimeMs: now - 9000,
        }),
        summary({ file: "/d/root.jsonl", firstMessage: "root", mtimeMs: now - 99000 }),
        summary({
          file: "/d/orphan.jsonl",
          parentSession: "/elsewhere/gone.jsonl",
          firstMessage: "orphan",
          mtimeMs: now - 500_000,
        }),
        summary({
          file: "/d/loop1.jsonl",
          parentSession: "/d/loop2.jsonl",
          firstMessage: "loop1",
          mtimeMs: now - 600_000,
        }),
        summary({
          file: "/d/loop2.jsonl",
          parentSession: "/d/loop1.jsonl",
          firstMessage: "loop2",
          mtimeMs: now - 700_000,
        }),
      ],
      { nowMs: now },
    );
    assert.deepEqual(
      rows.map((r) => [r.label, r.depth]),
      [
        ["root", 0],
        ["↳ child", 1],
        ["\u2003↳ grandchild", 2],
        ["other", 0],
        ["orphan", 0],
        ["loop1", 0],
        ["↳ loop2", 1],
      ],
    );
  });

  it("with no folder open every session shows its project folder; with several folders the folder's name", () => {
    const rows = sessionPickRows(
      [
        summary({ file: "/d/a.jsonl", cwd: "/home/u/code/app", firstMessage: "hi" }),
        summary({ file: "/d/b.jsonl", cwd: "/srv/other", mtimeMs: now - 6 * 60_000 }),
      ],
      {
        nowMs: now,
        folderName: (s) => projectFolderLabel(s.cwd, [], "/home/u"),
      },
    );
    const ICONS = { text: (t: string) => t, folderIcon: "$(folder) " };
    assert.equal(pickRowDetail(rows[0]!, ICONS), "$(folder) ~/code/app · a.jsonl");
    assert.equal(pickRowDetail(rows[1]!, ICONS), "$(folder) /srv/other · b.jsonl");
    const two = [
      { name: "app", path: "/home/u/code/app" },
      { name: "lib", path: "/home/u/code/lib" },
    ];
    assert.equal(projectFolderLabel("/home/u/code/lib", two, "/home/u"), "lib");
    assert.equal(projectFolderLabel("/home/u/code/lib/sub", two, "/home/u"), "lib/sub");
    assert.equal(projectFolderLabel("/home/u/code/app", [two[0]!], "/home/u"), undefined, "one folder: nothing to add");
    assert.equal(projectFolderLabel("/home/u/code/app/pkg", [two[0]!], "/home/u"), "pkg");
    assert.equal(projectFolderLabel(undefined, [], "/home/u"), "unknown project folder");
  });

  it("the follow row says what the mode does (no bare “on”)", () => {
    assert.deepEqual(followRow(true, true), {
      label: "$(check) Following the Latest Session",
      description: "current mode",
      detail:
        "Shows the most recently written session of this workspace and switches when pi starts a new one. Pick a session below to pin it.",
    });
    assert.equal(followRow(false, true).label, "$(arrow-up) Follow Latest Session");
    assert.equal(followRow(true, false).label, "$(info) No folder open: no session to follow");
    for (const r of [followRow(true, true), followRow(false, true), followRow(true, false), followRow(false, false)])
      assert.ok(!/\bon$/.test(r.description ?? ""), r.label);
  });

  it("tokens, windows, plurals", () => {
    assert.equal(formatGaugeTokens(950), "950");
    assert.equal(formatGaugeTokens(4227), "4.2k");
    assert.equal(formatGaugeTokens(12500), "12.5k");
    assert.equal(formatGaugeTokens(50000), "50.0k");
    assert.equal(formatGaugeTokens(99949), "99.9k");
    assert.equal(formatGaugeTokens(99960), "100k");
    assert.equal(formatGaugeTokens(150001), "150k");
    assert.equal(formatGaugeTokens(999600), "1M");
    assert.equal(formatGaugeTokens(1_234_567), "1.2M");
    assert.equal(formatWindowTokens(16000), "16k");
    assert.equal(formatWindowTokens(16384), "16.4k");
    assert.equal(formatWindowTokens(200000), "200k");
    assert.equal(formatWindowTokens(196000), "196k");
    assert.equal(formatWindowTokens(1_000_000), "1M");
    assert.equal(formatWindowTokens(1_048_576), "1.05M");
    assert.equal(plural(1, "entry", "entries"), "1 entry");
    assert.equal(plural(0, "entry", "entries"), "0 entries");
    assert.equal(plural(1234, "message"), "1,234 messages");
  });

  it("ages and sizes", () => {
    assert.equal(formatAge(now - 10_000, now), "just now");
    assert.equal(formatAge(now - 2 * 3600_000, now), "2 h ago");
    assert.equal(formatAge(now - 30 * 3600_000, now), "yesterday");
    assert.equal(
      formatAge(Date.UTC(2026, 0, 2, 10, 0, 0), now, "en-US"),
      formatDateTime(Date.UTC(2026, 0, 2, 10, 0, 0), "en-US"),
    );
    assert.match(formatDateTime(Date.UTC(2026, 0, 2, 10, 0, 0), "en-US"), /^Jan 2, 2026, \d\d:\d\d:00 (AM|PM)$/);
    assert.equal(formatBytes(900), "900 B");
    assert.equal(formatBytes(150 * 1024), "150 KB");
    assert.equal(formatBytes(20 * 1024 * 1024), "20 MB");
  });
});
