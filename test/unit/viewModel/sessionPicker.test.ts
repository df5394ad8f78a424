// Select Session at scale: the family order is the same as the straightforward recursive rule (kept
// here as the reference) on random forests with cycles, deep fork chains need no recursion, and the
// date format equals `toLocaleString(locale, DATE_TIME_OPTIONS)` from a cached formatter.
import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { resumeOrder, sessionModifiedMs, type SessionInfo } from "../../../src/core/read/sessionInfo";
import { DATE_TIME_OPTIONS, formatDateTime } from "../../../src/shared/format";
import { iconLabelText } from "../../../src/shared/untrusted";
import type { SessionAccess } from "../../../src/core/access/access";
import {
  familyRows,
  liveMarkText,
  PICKER_FIRST_ROWS,
  pickRowDetail,
  PLAIN_DETAIL as PLAIN,
  sessionPickRows,
  type FamilyRow,
} from "../../../src/viewModel/sessionPicker";

const info = (file: string, mtimeMs: number, parentSession?: string): SessionInfo => ({
  file,
  dev: 1,
  ino: 1,
  size: 100,
  mtimeMs,
  state: "session",
  messageCount: 1,
  entryCount: 1,
  models: [],
  scanned: 100,
  head: "",
  complete: true,
  ...(parentSession !== undefined ? { parentSession } : {}),
});

/**
 * pi's rule as it reads (`buildSessionTree`, recursive, paths resolved on every comparison): the
 * reference. Siblings by the latest activity of their subtree; equal ones keep pi's listing order
 * (its own time, then the file name descending).
 */
function referenceFamilyRows(infos: readonly SessionInfo[]): FamilyRow[] {
  const key = (p: string): string => path.resolve(p);
  const byPath = new Map<string, SessionInfo>(infos.map((i) => [key(i.file), i]));
  const children = new Map<string, SessionInfo[]>();
  const roots: SessionInfo[] = [];
  for (const i of infos) {
    const parent = i.parentSession ? key(i.parentSession) : undefined;
    if (parent && parent !== key(i.file) && byPath.has(parent)) {
      const list = children.get(parent);
      if (list) list.push(i);
      else children.set(parent, [i]);
    } else roots.push(i);
  }
  const latest = new Map<string, number>();
  const latestOf = (i: SessionInfo, seen: Set<string>): number => {
    const k = key(i.file);
    const known = latest.get(k);
    if (known !== undefined) return known;
    seen.add(k);
    let t = sessionModifiedMs(i);
    for (const c of children.get(k) ?? []) if (!seen.has(key(c.file))) t = Math.max(t, latestOf(c, seen));
    latest.set(k, t);
    return t;
  };
  const listing = (a: SessionInfo, b: SessionInfo): number =>
    sessionModifiedMs(b) - sessionModifiedMs(a) || path.basename(b.file).localeCompare(path.basename(a.file));
  const order = (list: SessionInfo[]): SessionInfo[] =>
    [...list].sort((a, b) => latestOf(b, new Set()) - latestOf(a, new Set()) || listing(a, b));
  const out: FamilyRow[] = [];
  const placed = new Set<string>();
  const walk = (i: SessionInfo, depth: number): void => {
    const k = key(i.file);
    if (placed.has(k)) return;
    placed.add(k);
    out.push({ info: i, depth });
    for (const c of order(children.get(k) ?? [])) walk(c, depth + 1);
  };
  for (const r of order(roots)) walk(r, 0);
  for (const i of [...infos].sort(listing)) walk(i, 0);
  return out;
}

const shape = (rows: FamilyRow[]) => rows.map((r) => `${r.depth}:${path.basename(r.info.file)}`);

describe("Select Session rows at scale", () => {
  it("familyRows = the recursive rule on random forests (forks, clones, missing parents, cycles, ties)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            parent: fc.option(fc.nat(40)),
            mtime: fc.nat(20),
            // a path spelt another way (the same file): for the session itself, for its parent
            odd: fc.boolean(),
            oddParent: fc.boolean(),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        (spec) => {
          const spell = (i: number, odd: boolean) => (odd ? `/d/x/../s${i}.jsonl` : `/d/s${i}.jsonl`);
          const infos = spec.map((s, i) =>
            info(spell(i, s.odd), s.mtime, s.parent === null ? undefined : spell(s.parent, s.oddParent)),
          );
          // without cycles: exactly the reference; with them (the reference's subtree times then
          // depend on its visiting order): every session once, each child right under its parent
          const ours = familyRows(infos);
          assert.equal(ours.length, infos.length, "every session once");
          assert.equal(new Set(ours.map((r) => r.info.file)).size, infos.length);
          const acyclic = infos.every((s) => {
            const seen = new Set<string>();
            let at: SessionInfo | undefined = s;
            while (at?.parentSession) {
              if (seen.has(path.resolve(at.file))) return false;
              seen.add(path.resolve(at.file));
              at = infos.find((x) => path.resolve(x.file) === path.resolve(at!.parentSession!));
            }
            return true;
          });
          if (acyclic) assert.deepEqual(shape(ours), shape(referenceFamilyRows(infos)));
          // a child always comes right after its parent's subtree starts, one level deeper
          for (let i = 0; i < ours.length; i++)
            if (ours[i]!.depth > 0) {
              const parent = [...ours.slice(0, i)].reverse().find((r) => r.depth === ours[i]!.depth - 1);
              assert.equal(path.resolve(parent!.info.file), path.resolve(ours[i]!.info.parentSession!));
            }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a fork chain 20 000 deep: no recursion, every level one deeper", () => {
    const infos = Array.from({ length: 20_000 }, (_, i) =>
      info(`/d/c${i}.jsonl`, i, i > 0 ? `/d/c${i - 1}.jsonl` : undefined),
    );
    const rows = familyRows(infos);
    assert.equal(rows.length, 20_000);
    assert.deepEqual(
      rows.slice(0, 3).map((r) => [path.basename(r.info.file), r.depth]),
      [
        ["c0.jsonl", 0],
        ["c1.jsonl", 1],
        ["c2.jsonl", 2],
      ],
    );
    assert.equal(rows.at(-1)!.depth, 19_999);
  });

  it("10 000 sessions give 10 000 rows, forks under their parent", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const infos = Array.from({ length: 10_000 }, (_, i) =>
      info(
        `/d/${String(i).padStart(5, "0")}.jsonl`,
        now - i * 60_000,
        i % 10 === 3 ? `/d/${String(i - 1).padStart(5, "0")}.jsonl` : undefined,
      ),
    );
    const rows = sessionPickRows(infos, { nowMs: now, locale: "en-US" });
    assert.equal(rows.length, 10_000);
    const i2 = rows.findIndex((r) => r.file === "/d/00002.jsonl");
    assert.equal(rows[i2 + 1]!.file, "/d/00003.jsonl");
    assert.equal(rows[i2 + 1]!.depth, 1);
    assert.equal(rows.at(-1)!.description, "7 days ago · 100 B · 1 message");
  });

  it("limit: the first rows of the same family order, with the same texts (the picker's first render)", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const infos = Array.from({ length: 1_000 }, (_, i) =>
      info(
        `/d/${String(i).padStart(4, "0")}.jsonl`,
        now - ((i * 7919) % 1000) * 60_000,
        i % 10 === 3 ? `/d/${String(i - 1).padStart(4, "0")}.jsonl` : undefined,
      ),
    );
    const all = sessionPickRows(infos, { nowMs: now, locale: "en-US" });
    const first = sessionPickRows(infos, { nowMs: now, locale: "en-US", limit: PICKER_FIRST_ROWS });
    assert.equal(first.length, PICKER_FIRST_ROWS);
    assert.deepEqual(first, all.slice(0, PICKER_FIRST_ROWS));
    assert.equal(sessionPickRows(infos.slice(0, 5), { nowMs: now, limit: PICKER_FIRST_ROWS }).length, 5);
  });

  it("a re-render reuses an unchanged session's texts; a new current one, folder or locale shows in the rows", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const s = {
      ...info("/d/a.jsonl", now - 30 * 86400_000),
      created: "2026-10-01T10:00:00.000Z",
      lastActivity: now - 40 * 86400_000,
    };
    const first = sessionPickRows([s], { nowMs: now, locale: "en-US" })[0]!;
    // the age is pi's: the latest message's time, not the file's
    assert.equal(first.description, `${formatDateTime(s.lastActivity, "en-US")} · 100 B · 1 message`);
    assert.doesNotMatch(pickRowDetail(first, PLAIN), /current/);
    const again = sessionPickRows([s], { nowMs: now + 1000, locale: "en-US" })[0]!;
    assert.deepEqual(again, first);
    const current = sessionPickRows([s], { nowMs: now, locale: "en-US", currentFile: "/d/a.jsonl" })[0]!;
    assert.match(pickRowDetail(current, PLAIN), /^current · /);
    const de = sessionPickRows([s], { nowMs: now, locale: "de" })[0]!;
    assert.equal(de.description, `${formatDateTime(s.lastActivity, "de")} · 100 B · 1 message`);
    assert.match(
      pickRowDetail(de, PLAIN),
      new RegExp(`started ${formatDateTime(Date.parse(s.created), "de").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
    const folder = sessionPickRows([s], { nowMs: now, locale: "de", folderName: () => "app" })[0]!;
    assert.equal(folder.detail.folder, "app");
    assert.match(pickRowDetail(folder, { text: (t) => t, folderIcon: "$(folder) " }), /^\$\(folder\) app · /);
    // session text that looks like an icon stays text on every surface; only the folder's icon is drawn
    const iconish = { ...s, name: "n", firstMessage: "$(zap) run it", file: "/d/$(x) b.jsonl" };
    const row = sessionPickRows([iconish], { nowMs: now, locale: "en-US", folderName: () => "$(repo) app" })[0]!;
    assert.match(pickRowDetail(row, PLAIN), /^\$\(repo\) app · \$\(zap\) run it · .* · \$\(x\) b\.jsonl$/);
    const shown = pickRowDetail(row, { text: iconLabelText, folderIcon: "$(folder) " });
    assert.match(shown, /^\$\(folder\) \\\$\(repo\) app · \\\$\(zap\) run it · /);
    assert.equal(shown.match(/(?<!\\)\$\(/g)?.length, 1, shown);
    // a newer object for the same file (the catalog read it again) gets its own texts
    const grown = sessionPickRows([{ ...s, size: 5000, messageCount: 3 }], { nowMs: now, locale: "de" })[0]!;
    assert.match(grown.description, / · 4\.9 KB · 3 messages$/);
  });

  it("formatDateTime = toLocaleString(locale, DATE_TIME_OPTIONS), also for an unknown locale tag", () => {
    const when = Date.parse("2026-11-30T06:33:34Z");
    for (const locale of ["en-US", "de", "ja", "fr-CA", undefined])
      assert.equal(formatDateTime(when, locale), new Date(when).toLocaleString(locale, DATE_TIME_OPTIONS), locale);
    assert.equal(formatDateTime(when, "not a tag!"), new Date(when).toLocaleString(undefined, DATE_TIME_OPTIONS));
    assert.equal(formatDateTime("garbage"), "garbage");
    assert.equal(formatDateTime("2026-11-30T06:33:34Z", "en-US"), formatDateTime(when, "en-US"));
  });
});

describe("pi's /resume order and who has a session open", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  it("sorts by pi's modified time: the latest message, else the header time, else the mtime", () => {
    const rows = familyRows([
      { ...info("/d/b.jsonl", now), lastActivity: now - 5000 },
      { ...info("/d/a.jsonl", now - 1), created: new Date(now - 1000).toISOString() },
      info("/d/c.jsonl", now - 3000),
      // no activity after 1970 (pi's max starts at 0): the header time
      { ...info("/d/d.jsonl", now + 9000), lastActivity: 0, created: new Date(now - 2000).toISOString() },
    ]);
    assert.deepEqual(
      rows.map((r) => path.basename(r.info.file)),
      ["a.jsonl", "d.jsonl", "c.jsonl", "b.jsonl"],
    );
  });

  it("equal times keep pi's listing order: the file name descending; --all: the mtime first", () => {
    const same = (file: string, mtimeMs: number) => ({ ...info(file, mtimeMs), lastActivity: now });
    const list = [same("/d/a.jsonl", 2), same("/e/c.jsonl", 1), same("/d/b.jsonl", 3)];
    assert.deepEqual(
      resumeOrder(list).map((i) => i.file),
      ["/e/c.jsonl", "/d/b.jsonl", "/d/a.jsonl"],
    );
    assert.deepEqual(
      resumeOrder(list, "all").map((i) => i.file),
      ["/d/b.jsonl", "/d/a.jsonl", "/e/c.jsonl"],
    );
  });

  it("an invalid time (NaN, as pi's Date) sorts exactly as pi's two steps do", () => {
    const list = Array.from({ length: 12 }, (_, i) => ({
      ...info(`/d/s${i}.jsonl`, i),
      lastActivity: i % 4 === 1 ? Number.MAX_VALUE : now - ((i * 37) % 11) * 1000,
    }));
    assert.ok(Number.isNaN(sessionModifiedMs(list[1]!)));
    // pi: the files by name descending, then Array.sort by `b.modified - a.modified`
    const pi = [...list]
      .sort((a, b) => path.basename(b.file).localeCompare(path.basename(a.file)))
      .sort((a, b) => sessionModifiedMs(b) - sessionModifiedMs(a));
    assert.deepEqual(
      resumeOrder(list).map((i) => i.file),
      pi.map((i) => i.file),
    );
    const row = sessionPickRows([list[1]!], { nowMs: now, locale: "en-US" })[0]!;
    assert.match(row.description, /^unknown time · /);
  });

  it("a live session's row says which pi has it, with or without the live bridge", () => {
    const s = [
      info("/d/a.jsonl", now - 1000),
      info("/d/b.jsonl", now - 2000),
      info("/d/c.jsonl", now - 3000),
      info("/d/d.jsonl", now - 4000),
    ];
    const live = new Map<string, Pick<SessionAccess, "evidence">>([
      ["/d/a.jsonl", { evidence: [{ kind: "bridge", strength: "certain", pid: 4242, piVersion: "1.6.0" }] }],
      [
        "/d/b.jsonl",
        { evidence: [{ kind: "process", strength: "probable", pid: 77, command: "pi", how: "started-here" }] },
      ],
      [
        "/d/c.jsonl",
        { evidence: [{ kind: "recent-write", strength: "possible", ageSeconds: 12.4, guardSeconds: 60 }] },
      ],
    ]);
    const rows = sessionPickRows(s, { nowMs: now, locale: "en-US", live });
    assert.deepEqual(
      rows.map((r) => r.description),
      [
        "live in pi 1.6.0 (pid 4242, live bridge) · just now · 100 B · 1 message",
        "live in pi (pid 77, no live bridge) · just now · 100 B · 1 message",
        "written 12 s ago · just now · 100 B · 1 message",
        "just now · 100 B · 1 message",
      ],
    );
    assert.deepEqual(rows[0]!.live, { kind: "bridge", pid: 4242, piVersion: "1.6.0" });
    assert.equal(rows[3]!.live, undefined);
    assert.equal(liveMarkText({ kind: "bridge", pid: 9 }), "live in pi (pid 9, live bridge)");
  });
});
