/**
 * `pi-context sessions [--cwd DIR] [--all] [--json] [--agent-dir DIR]`: the sessions of a folder
 * (default: the current directory, with its sub-folders' sessions, as the extension's default),
 * or of every folder (`--all`), in the order, with the labels and facts of "Pi Context: Select Session…"
 * (`viewModel/sessionPicker.ts`): pi's `/resume` order (the latest message first, forks under their
 * parent), pi's label and message count, who has a session open (the access model: the live
 * bridges' announcements and the process table, read while the listing is). Each row is one line
 * of {@link lineText}: a session's name cannot start a row of its own.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { listSessionFiles, SessionCatalog } from "../core/read/catalog";
import { listSessions, sessionDirCandidates } from "../core/read/locate";
import { listedSession, liveAmong, type SessionAccess } from "../core/access/access";
import { processFacts } from "../core/access/gather";
import { ownWriteChecker } from "../core/access/ownWrites";
import { sessionModifiedMs, type SessionInfo } from "../core/read/sessionInfo";
import { announcedPis, liveAnnouncements } from "../liveBridge/announced";
import { getAgentDir, resolveSettings } from "../core/rules/settings";
import { sessionLabel } from "../core/rules/sessionLabel";
import { familyRows, liveMarkOf, pickRowDetail, PLAIN_DETAIL, sessionPickRows } from "../viewModel/sessionPicker";
import { lineText } from "../shared/untrusted";
import { checkFlags, parseArgs, stringFlag, type CliCommand } from "./args";

export const SESSIONS_USAGE = `pi-context sessions [--cwd DIR] [--all] [--json] [--agent-dir DIR]`;

const KNOWN = new Set(["cwd", "all", "json", "agent-dir"]);

/** The sessions `pi-context sessions` lists (see the file comment), newest first. */
export async function listCliSessions(options: {
  agentDir: string;
  cwd: string;
  all: boolean;
  env?: NodeJS.ProcessEnv;
}): Promise<SessionInfo[]> {
  const sessionsRoot = path.join(options.agentDir, "sessions");
  const catalog = new SessionCatalog();
  if (options.all) {
    let dirs: string[] = [];
    try {
      dirs = (await fs.promises.readdir(sessionsRoot)).map((n) => path.join(sessionsRoot, n));
    } catch {
      // no sessions yet
    }
    const infos = await catalog.list(await listSessionFiles(dirs));
    return infos.filter((i) => i.state === "session");
  }
  const cwd = path.resolve(options.cwd);
  const settings = resolveSettings({ agentDir: options.agentDir, cwd, projectSettings: "auto" });
  const candidates = sessionDirCandidates({
    agentDir: options.agentDir,
    cwd,
    env: options.env ?? process.env,
    ...(settings.sessionDir ? { sessionDirSetting: settings.sessionDir } : {}),
  });
  return listSessions(candidates, cwd, { orInside: true, sessionsRoot, catalog });
}

/** Who has which of `infos` open (`liveAmong`), from facts read at the same time as the listing. */
async function liveOf(
  infos: readonly SessionInfo[],
  facts: Promise<Awaited<ReturnType<typeof processFacts>>>,
): Promise<Map<string, SessionAccess>> {
  const own = ownWriteChecker();
  const sessions = infos.map((i) => listedSession(i, own(i.file, i)));
  const known = await facts.catch(() => undefined);
  if (!known) return new Map(); // no table, no announcements: no marks (the listing stands)
  return liveAmong(sessions, { ...known, ignorePids: [process.pid] }, Date.now());
}

const isoOrNull = (ms: number): string | null => (Number.isNaN(ms) ? null : new Date(ms).toISOString());

export const sessionsCommand: CliCommand = async (argv, out) => {
  const args = parseArgs(argv, new Set(["all", "json"]));
  checkFlags(args, KNOWN, SESSIONS_USAGE);
  const env = process.env;
  const agentDirFlag = stringFlag(args, "agent-dir");
  const agentDir = agentDirFlag ? path.resolve(agentDirFlag) : getAgentDir(env);
  const cwd = stringFlag(args, "cwd") ?? process.cwd();
  const all = args.flags.has("all");
  const scope = all ? "all" : "folder";
  // the process table is read while the listing is
  const facts = processFacts({ announced: () => announcedPis(liveAnnouncements(agentDir)) });
  const infos = await listCliSessions({ agentDir, cwd, all, env });
  const live = await liveOf(infos, facts);
  const json = args.flags.has("json");
  if (json) {
    out(
      JSON.stringify(
        familyRows(infos, scope).map(({ info, depth }) => ({
          file: info.file,
          label: sessionLabel(info),
          name: info.name ?? null,
          firstMessage: info.firstMessage ?? null,
          id: info.id ?? null,
          cwd: info.cwd ?? null,
          parentSession: info.parentSession ?? null,
          depth,
          created: info.created ?? null,
          modified: isoOrNull(sessionModifiedMs(info)),
          fileModified: new Date(info.mtimeMs).toISOString(),
          size: info.size,
          messageCount: info.messageCount,
          entryCount: info.entryCount,
          models: info.models,
          live: liveMarkOf(live.get(info.file)) ?? null,
        })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (infos.length === 0) {
    out(`No pi sessions for ${all ? agentDir : path.resolve(cwd)}.`);
    return 0;
  }
  const rows = sessionPickRows(infos, { nowMs: Date.now(), locale: "en-US", scope, live });
  for (const row of rows) {
    out(lineText(`${row.label}  (${row.description})`));
    out(lineText(`    ${pickRowDetail(row, PLAIN_DETAIL)}`));
    out(lineText(`    ${row.file}`));
  }
  return 0;
};
