// pi as a library oracle: shared implementation of oracle.mjs, pi-open-check.mjs and the batch
// protocol. Runs under Node >= 22.19 only (the Node 22 installed by setup.mjs).
//
// Which pi: the reference version (1.6.0, `@earendil-works/pi-coding-agent`), or another version of
// the conformance matrix chosen by the environment variable PI_ORACLE_VERSION (e.g. `1.5.2`, the npm
// alias `pi-1.5.2`; see versions.mjs).
//
// Rules kept here (see README.md):
// - every answer comes from pi's own functions (loaded from that pi package, deep modules by URL
//   because the package `exports` map hides them);
// - pi never sees the caller's files: session files are copied to a private temp dir first
//   (SessionManager.open migrates v1/v2 files in place and appends a missing final "\n"), and the
//   model registry gets a private agent dir holding copies of models.json / models-store.json
//   (ModelRuntime.create writes auth.json / models-store.json and takes lock files there);
// - HOME and PI_CODING_AGENT_DIR point into the temp dir, PI_OFFLINE=1 (no catalog downloads).
// Nothing in this module writes to stdout.

import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { piAiDir, piPackageDir, REFERENCE_PI_VERSION } from "./versions.mjs";

export const EXPECTED_PI_VERSION = process.env.PI_ORACLE_VERSION || REFERENCE_PI_VERSION;

// --------------------------------------------------------------------------------------------
// Node version and private environment (before pi is imported)
// --------------------------------------------------------------------------------------------

function assertNodeVersion() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 22 || (major === 22 && minor < 19)) {
    throw new Error(
      `pi ${EXPECTED_PI_VERSION} needs Node >= 22.19, this is ${process.version}. ` +
        "Run the oracle with the Node printed by `node test/conformance/oracle/setup.mjs`.",
    );
  }
}
assertNodeVersion();

const TMP_ROOT = mkdtempSync(join(tmpdir(), "pi-oracle-"));
const TMP_HOME = join(TMP_ROOT, "home");
const TMP_EMPTY_AGENT = join(TMP_ROOT, "empty-agent");
mkdirSync(TMP_HOME, { recursive: true });
mkdirSync(TMP_EMPTY_AGENT, { recursive: true });
process.env.HOME = TMP_HOME;
process.env.USERPROFILE = TMP_HOME;
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = TMP_EMPTY_AGENT;
delete process.env.PI_CODING_AGENT_SESSION_DIR;

let cleaned = false;
export function cleanupTemp() {
  if (cleaned) return;
  cleaned = true;
  try {
    rmSync(TMP_ROOT, { recursive: true, force: true });
  } catch {
    // best effort
  }
}
process.on("exit", cleanupTemp);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    cleanupTemp();
    process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1));
  });
}

let tmpCounter = 0;
function newTmpDir(prefix) {
  const dir = join(TMP_ROOT, `${prefix}-${++tmpCounter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

// --------------------------------------------------------------------------------------------
// pi modules
// --------------------------------------------------------------------------------------------

const PI_BASE = pathToFileURL(join(piPackageDir(EXPECTED_PI_VERSION), "dist", "index.js")).href;
const piUrl = (rel) => new URL(rel, PI_BASE).href;

const pi = await import(PI_BASE);
const compactionMod = await import(piUrl("core/compaction/compaction.js"));
const utilsMod = await import(piUrl("core/compaction/utils.js"));
const sessionMod = await import(piUrl("core/session-manager.js"));
// virtual models (and getBranchSelection) exist from pi 0.99; before, a resumed session used the
// projection's model (root → leaf, last wins), which is the same for sessions without virtual models
const virtualModelsMod = existsSync(new URL(piUrl("core/virtual-models.js")))
  ? await import(piUrl("core/virtual-models.js"))
  : {
      getBranchSelection: (branch) => {
        const model = sessionMod.buildSessionProjection(branch, branch.at(-1)?.id ?? null).model;
        return model ? { provider: model.provider, modelId: model.modelId } : undefined;
      },
    };
const footerMod = await import(piUrl("modes/interactive/components/footer.js"));
// pi-ai as this pi version's library code reaches it (its own node_modules in the shallow layout)
const transformMod = await import(
  pathToFileURL(join(piAiDir(EXPECTED_PI_VERSION), "dist", "api", "transform-messages.js")).href
);
const piAi = await import("@earendil-works/pi-ai");
// pi-ai's transcript replay as this pi version's library code reaches it
const transcriptMod = await import(
  pathToFileURL(join(piAiDir(EXPECTED_PI_VERSION), "dist", "utils", "transcript.js")).href
).catch(() => piAi);

if (pi.VERSION !== EXPECTED_PI_VERSION) {
  throw new Error(`expected pi ${EXPECTED_PI_VERSION}, loaded ${pi.VERSION} from ${PI_BASE}`);
}
// Deep imports by URL must be the same module instances as the index re-exports.
if (compactionMod.estimateTokens !== pi.estimateTokens || sessionMod.SessionManager !== pi.SessionManager) {
  throw new Error("deep pi modules are not the index's module instances");
}

const { SessionManager, SettingsManager, ModelRuntime, collectEntriesForBranchSummary, prepareBranchEntries } = pi;
const {
  estimateTokens,
  calculateContextTokens,
  shouldCompact,
  estimateContextTokens,
  estimateProjectedContextTokens,
  prepareCompaction,
} = compactionMod;
const { computeFileLists } = utilsMod;
const { getLatestCompactionEntry, buildSessionContext } = sessionMod;
const { getBranchSelection } = virtualModelsMod;
const { transformMessages } = transformMod;
const { convertToLlm } = pi;
const { formatTokens } = footerMod;

export const PI_VERSION = pi.VERSION;
export const PI_PACKAGE_URL = PI_BASE;

// --------------------------------------------------------------------------------------------
// Arguments (same grammar for the CLI and for batch requests)
// --------------------------------------------------------------------------------------------

const FLAG_BOOL = {
  "--no-project-settings": "noProjectSettings",
  "--full": "full",
  "--verify-compactions": "verifyCompactions",
  "--verify-branch-summaries": "verifyBranchSummaries",
};
const FLAG_VALUE = {
  "--agent-dir": "agentDir",
  "--cwd": "cwd",
  "--leaf": "leaf",
  "--branch-target": "branchTarget",
};
const FLAG_INT = {
  "--context-window": "contextWindow",
  "--reserve-tokens": "reserveTokens",
  "--keep-recent-tokens": "keepRecentTokens",
};

/** Parse oracle arguments. Positional arguments are returned in `positional`. */
export function parseOracleArgs(argv) {
  const opts = { positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = String(argv[i]);
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const inlineValue = eq > 0 ? arg.slice(eq + 1) : undefined;
    const takeValue = () => {
      if (inlineValue !== undefined) return inlineValue;
      if (i + 1 >= argv.length) throw new Error(`${name} needs a value`);
      return String(argv[++i]);
    };
    if (name in FLAG_BOOL) {
      if (inlineValue !== undefined) throw new Error(`${name} takes no value`);
      opts[FLAG_BOOL[name]] = true;
    } else if (name in FLAG_VALUE) {
      opts[FLAG_VALUE[name]] = takeValue();
    } else if (name in FLAG_INT) {
      const raw = takeValue();
      if (!/^-?\d+$/.test(raw)) throw new Error(`${name} needs an integer, got ${JSON.stringify(raw)}`);
      opts[FLAG_INT[name]] = Number(raw);
    } else if (name.startsWith("--")) {
      throw new Error(`unknown option ${name}`);
    } else {
      opts.positional.push(arg);
    }
  }
  return opts;
}

// --------------------------------------------------------------------------------------------
// Agent dir: read-only settings, private copy for the model registry
// --------------------------------------------------------------------------------------------

/** Files of an agent dir that influence what the oracle reports. auth.json is never read. */
const MODEL_FILES = ["models.json", "models-store.json"];

function readIfExists(path) {
  try {
    return readFileSync(path);
  } catch (error) {
    if (error && (error.code === "ENOENT" || error.code === "ENOTDIR")) return undefined;
    throw error;
  }
}

/**
 * Describe the agent dir of a request: `source` = the caller's dir (read-only) or undefined,
 * `files` = in-memory file contents ({ "settings.json": object|string, ... }).
 */
function agentView(agentDir, agentFiles) {
  if (agentDir && agentFiles) throw new Error("give either --agent-dir or agentFiles, not both");
  if (agentFiles) {
    const contents = {};
    for (const [name, value] of Object.entries(agentFiles)) {
      if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`agentFiles: bad file name ${JSON.stringify(name)}`);
      contents[name] = Buffer.from(typeof value === "string" ? value : JSON.stringify(value, null, 2));
    }
    return { display: "<agentFiles>", read: (name) => contents[name], settingsPath: undefined };
  }
  if (agentDir) {
    const dir = resolve(agentDir);
    return { display: dir, read: (name) => readIfExists(join(dir, name)), settingsPath: join(dir, "settings.json") };
  }
  return { display: null, read: () => undefined, settingsPath: undefined };
}

const runtimeCache = new Map(); // content hash of the model files -> { dir, runtime }
const RUNTIME_CACHE_MAX = 16;

/** pi's ModelRuntime for the agent dir's models.json / models-store.json (private copies). */
async function getModelRuntime(view) {
  const hash = createHash("sha256");
  const present = {};
  for (const name of MODEL_FILES) {
    const content = view.read(name);
    present[name] = content;
    hash.update(`${name}\0${content === undefined ? "-" : content.length}\0`);
    if (content !== undefined) hash.update(content);
  }
  const key = hash.digest("hex");
  const cached = runtimeCache.get(key);
  if (cached) {
    runtimeCache.delete(key);
    runtimeCache.set(key, cached);
    return cached;
  }
  const dir = newTmpDir("agent");
  for (const name of MODEL_FILES) {
    if (present[name] !== undefined) writeFileSync(join(dir, name), present[name]);
  }
  process.env.PI_CODING_AGENT_DIR = dir;
  const runtime = await ModelRuntime.create({
    authPath: join(dir, "auth.json"),
    modelsPath: join(dir, "models.json"),
    modelsStorePath: join(dir, "models-store.json"),
  });
  const entry = { dir, runtime };
  runtimeCache.set(key, entry);
  while (runtimeCache.size > RUNTIME_CACHE_MAX) {
    const [oldKey, old] = runtimeCache.entries().next().value;
    runtimeCache.delete(oldKey);
    rmSync(old.dir, { recursive: true, force: true });
  }
  return entry;
}

/**
 * pi's SettingsManager over a read-only storage: global settings from the agent dir, project
 * settings from <cwd>/.pi/settings.json only when trusted. pi's own FileSettingsStorage takes a
 * lock file next to each settings file; this storage only reads, merging and validation are pi's.
 */
function createSettingsManager(view, cwd, projectTrusted) {
  const projectPath = join(resolve(cwd), ".pi", "settings.json");
  const storage = {
    withLock(scope, fn) {
      let current;
      if (scope === "global") current = view.read("settings.json");
      else current = readIfExists(projectPath);
      fn(current === undefined ? undefined : current.toString("utf-8"));
      // writes are ignored: the oracle never changes settings
    },
  };
  return SettingsManager.fromStorage(storage, { projectTrusted });
}

// --------------------------------------------------------------------------------------------
// Session file handling
// --------------------------------------------------------------------------------------------

/** First parsed line of a session file (pi's header rule: blank/malformed lines skipped). */
function readRawHeader(path) {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let pending = Buffer.alloc(0);
    let scanned = 0;
    const tryLine = (buf) => {
      const line = buf.toString("utf-8");
      if (!line.trim()) return undefined;
      try {
        return JSON.parse(line);
      } catch {
        return undefined;
      }
    };
    while (scanned < 8 * 1024 * 1024) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) {
        const parsed = tryLine(pending);
        return parsed ?? null;
      }
      scanned += n;
      pending = Buffer.concat([pending, buffer.subarray(0, n)]);
      let start = 0;
      let nl = pending.indexOf(10, start);
      while (nl !== -1) {
        const parsed = tryLine(pending.subarray(start, nl));
        if (parsed !== undefined) return parsed;
        start = nl + 1;
        nl = pending.indexOf(10, start);
      }
      pending = pending.subarray(start);
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Copy a session file (or in-memory content) into a private temp dir; returns the copy's path. */
function privateCopy(source) {
  const dir = newTmpDir("session");
  if (source.entriesJsonl !== undefined) {
    const path = join(dir, "session.jsonl");
    writeFileSync(path, source.entriesJsonl);
    return { dir, path };
  }
  const abs = resolve(source.file);
  if (!existsSync(abs)) throw new Error(`session file not found: ${source.file}`);
  if (!statSync(abs).isFile()) throw new Error(`not a file: ${source.file}`);
  const path = join(dir, basename(abs) || "session.jsonl");
  copyFileSync(abs, path);
  return { dir, path };
}

function describeSource(source) {
  return source.entriesJsonl !== undefined ? "<entriesJsonl>" : resolve(source.file);
}

// --------------------------------------------------------------------------------------------
// Formatting helpers (pure)
// --------------------------------------------------------------------------------------------

function entryTypeName(entry) {
  return entry.type === "message" ? `message:${entry.message?.role}` : entry.type;
}

function usageTotal(message) {
  return message.usage ? calculateContextTokens(message.usage) : 0;
}

function messageInfo(entryId, message) {
  const info = { entryId, role: message.role, estimateTokens: estimateTokens(message) };
  if (message.role === "assistant") {
    info.stopReason = message.stopReason;
    info.usageTotal = usageTotal(message);
  }
  return info;
}

function setToArray(set) {
  return set ? [...set] : [];
}

function fileOpsToJson(fileOps) {
  return { read: setToArray(fileOps.read), written: setToArray(fileOps.written), edited: setToArray(fileOps.edited) };
}

function arraysEqual(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Attribute messages produced by pi's prepareCompaction (which builds its own projection) to
 * their source entries: walk the candidates (entryId, message) of our projection in order and
 * take the next one that is the same object or structurally equal.
 */
function attributeMessages(messages, candidates) {
  const ids = [];
  let pos = 0;
  const json = new Map();
  const jsonOf = (m) => {
    let s = json.get(m);
    if (s === undefined) {
      s = JSON.stringify(m);
      json.set(m, s);
    }
    return s;
  };
  for (const message of messages) {
    let found = -1;
    for (let i = pos; i < candidates.length; i++) {
      if (candidates[i].message === message) {
        found = i;
        break;
      }
    }
    if (found < 0) {
      const target = jsonOf(message);
      for (let i = pos; i < candidates.length; i++) {
        if (jsonOf(candidates[i].message) === target) {
          found = i;
          break;
        }
      }
    }
    if (found < 0) {
      ids.push(null);
      continue;
    }
    ids.push(candidates[found].entryId);
    pos = found + 1;
  }
  return ids;
}

function footerText(usage) {
  const window = formatTokens(usage.contextWindow);
  return usage.percent === null ? `?/${window}` : `${usage.percent.toFixed(1)}%/${window}`;
}

// --------------------------------------------------------------------------------------------
// Context usage exactly as AgentSession.getContextUsage (dist/core/agent-session.js)
// --------------------------------------------------------------------------------------------

function contextUsageLikePi(contextWindow, projection, branch) {
  if (!(contextWindow > 0)) return undefined;
  const latestCompaction = getLatestCompactionEntry(branch);
  if (latestCompaction) {
    const projectedAssistants = new Set(
      projection.entries.flatMap((entry) =>
        entry.messages.some(
          (message) =>
            message.role === "assistant" &&
            message.stopReason !== "aborted" &&
            message.stopReason !== "error" &&
            calculateContextTokens(message.usage) > 0,
        )
          ? [entry.sourceEntry.id]
          : [],
      ),
    );
    const compactionIndex = branch.findIndex((entry) => entry.id === latestCompaction.id);
    const hasPostCompactionUsage = branch.slice(compactionIndex + 1).some((entry) => projectedAssistants.has(entry.id));
    if (!hasPostCompactionUsage) return { tokens: null, contextWindow, percent: null };
  }
  const estimate = estimateProjectedContextTokens(projection, branch);
  return { tokens: estimate.tokens, contextWindow, percent: (estimate.tokens / contextWindow) * 100 };
}

// --------------------------------------------------------------------------------------------
// Opening a session the way pi does (on a private copy)
// --------------------------------------------------------------------------------------------

function openCopy(source) {
  const copy = privateCopy(source);
  try {
    const rawHeader = readRawHeader(copy.path);
    const sm = SessionManager.open(copy.path);
    return { copy, rawHeader, sm };
  } catch (error) {
    rmSync(copy.dir, { recursive: true, force: true });
    // report the caller's path, not the private copy's
    if (error instanceof Error) error.message = error.message.split(copy.path).join(describeSource(source));
    throw error;
  }
}

function applyLeaf(sm, leaf) {
  if (leaf === undefined) return;
  if (leaf === "null" || leaf === "root") sm.resetLeaf();
  else sm.branch(leaf);
}

// --------------------------------------------------------------------------------------------
// The oracle
// --------------------------------------------------------------------------------------------

/**
 * pi's view of one session file. `source` = { file } or { entriesJsonl }; `opts` = parsed flags
 * (parseOracleArgs) plus optional `agentFiles`.
 */
export async function analyzeSession(source, opts = {}) {
  const view = agentView(opts.agentDir, opts.agentFiles);
  const { copy, rawHeader, sm } = openCopy(source);
  try {
    applyLeaf(sm, opts.leaf);
    const full = !!opts.full;
    const entries = sm.getEntries();
    const branch = sm.getBranch();
    const projection = sm.buildSessionProjection();
    const leafId = sm.getLeafId();

    // ---- model: session selection (pi's getBranchSelection) resolved in pi's registry
    const { runtime } = await getModelRuntime(view);
    // the header's cwd as written (pi resolves it against process.cwd() for its own use)
    const headerCwd = rawHeader && typeof rawHeader.cwd === "string" ? rawHeader.cwd : undefined;
    const cwd = opts.cwd ?? headerCwd ?? sm.getCwd();
    const settingsManager = createSettingsManager(view, cwd, !opts.noProjectSettings);
    let selection = null;
    const branchSelection = getBranchSelection(branch, (provider, modelId) => runtime.getModel(provider, modelId));
    if (branchSelection) {
      selection = { provider: branchSelection.provider, modelId: branchSelection.modelId, source: "session-branch" };
    } else {
      const provider = settingsManager.getDefaultProvider();
      const modelId = settingsManager.getDefaultModel();
      if (provider && modelId) selection = { provider, modelId, source: "settings-default" };
    }
    const resolvedModel = selection ? runtime.getModel(selection.provider, selection.modelId) : undefined;
    const resolved = resolvedModel
      ? {
          provider: resolvedModel.provider,
          id: resolvedModel.id,
          contextWindow: resolvedModel.contextWindow,
          maxTokens: resolvedModel.maxTokens,
        }
      : null;
    const contextWindow = opts.contextWindow ?? (resolvedModel ? (resolvedModel.contextWindow ?? 0) : null);
    const model = { selection, resolved, contextWindow };
    const registryError = runtime.getError?.();
    if (registryError) model.registryError = registryError;

    // ---- settings (pi's SettingsManager; overrides keyed by the resolved model)
    const settingsModel =
      resolvedModel ?? (selection ? { provider: selection.provider, id: selection.modelId } : undefined);
    const compaction = { ...settingsManager.getCompactionSettings(settingsModel) };
    if (opts.reserveTokens !== undefined) compaction.reserveTokens = opts.reserveTokens;
    if (opts.keepRecentTokens !== undefined) compaction.keepRecentTokens = opts.keepRecentTokens;
    const branchSummarySettings = settingsManager.getBranchSummarySettings();
    const settings = {
      compaction,
      branchSummary: branchSummarySettings,
      agentDir: view.display,
      cwd,
      projectSettings: !opts.noProjectSettings,
    };
    const settingsErrors = settingsManager.drainErrors?.() ?? [];
    if (settingsErrors.length > 0) {
      settings.errors = settingsErrors.map((e) => `${e.scope}: ${e.error?.message ?? String(e.error)}`);
    }

    // ---- context
    const candidates = [];
    const contextMessages = [];
    for (const pe of projection.entries) {
      for (const message of pe.messages) {
        candidates.push({ entryId: pe.sourceEntry.id, message });
        contextMessages.push(full ? messageInfo(pe.sourceEntry.id, message) : `${pe.sourceEntry.id} ${message.role}`);
      }
    }
    const compactionCandidates = [];
    for (const pe of projection.entries) {
      if (pe.sourceEntry.type === "compaction") continue;
      for (const message of pe.messages) {
        if (message.role !== "system") compactionCandidates.push({ entryId: pe.sourceEntry.id, message });
      }
    }

    const estimate = estimateContextTokens(projection.messages);
    const projected = estimateProjectedContextTokens(projection, branch);

    let contextUsage;
    if (contextWindow === null) {
      contextUsage = { unavailable: "no context window (model not resolved; pass --context-window)" };
    } else {
      const usage = contextUsageLikePi(contextWindow, projection, branch);
      contextUsage = usage
        ? { ...usage, footer: footerText(usage) }
        : { unavailable: `context window ${contextWindow} <= 0 (pi: getContextUsage() returns undefined)` };
    }
    const shouldCompactValue = contextWindow > 0 ? shouldCompact(projected.tokens, contextWindow, compaction) : null;

    // ---- compaction preparation at the leaf
    const prep = prepareCompaction(branch, compaction);
    let prepareCompactionJson = null;
    let nullReason;
    if (prep) {
      const summarizeIds = attributeMessages(prep.messagesToSummarize, compactionCandidates);
      const prefixIds = attributeMessages(prep.turnPrefixMessages, compactionCandidates);
      const part = (messages, ids) => {
        const out = { count: messages.length, entryIds: ids };
        if (full) out.messages = messages.map((m, i) => messageInfo(ids[i], m));
        return out;
      };
      prepareCompactionJson = {
        firstKeptEntryId: prep.firstKeptEntryId,
        isSplitTurn: prep.isSplitTurn,
        tokensBefore: prep.tokensBefore,
        hasPreviousSummary: prep.previousSummary !== undefined,
        messagesToSummarize: part(prep.messagesToSummarize, summarizeIds),
        turnPrefix: part(prep.turnPrefixMessages, prefixIds),
        fileOps: fileOpsToJson(prep.fileOps),
        fileLists: computeFileLists(prep.fileOps),
        settings: prep.settings,
      };
    } else {
      nullReason =
        branch.length > 0 && branch[branch.length - 1].type === "compaction"
          ? "last path entry is a compaction (pi: 'Already compacted')"
          : "nothing to summarize (pi: 'Nothing to compact (session too small)')";
    }

    const result = {
      piVersion: pi.VERSION,
      file: describeSource(source),
      header:
        rawHeader && typeof rawHeader === "object"
          ? { id: rawHeader.id, version: rawHeader.version ?? 1, cwd: rawHeader.cwd }
          : null,
      entryCount: entries.length,
      leafId,
      pathIds: branch.map((e) => e.id),
      pathTypes: branch.map(entryTypeName),
      contextEntries: projection.entries.map((pe) => `${pe.sourceEntry.id} ${entryTypeName(pe.sourceEntry)}`),
      context: {
        model: projection.model ?? null,
        thinkingLevel: projection.thinkingLevel,
        messages: contextMessages,
      },
      model,
      settings,
      estimateContextTokens: estimate,
      estimateProjectedContextTokens: projected,
      contextUsage,
      shouldCompact: shouldCompactValue,
      prepareCompaction: prepareCompactionJson,
    };
    if (nullReason) result.prepareCompactionNullReason = nullReason;

    // ---- navigation / branch summary preview
    if (opts.branchTarget !== undefined) {
      result.branchSummary = branchSummaryPreview(sm, leafId, opts.branchTarget, contextWindow, branchSummarySettings);
    }
    if (opts.verifyCompactions) {
      result.verifyCompactions = entries
        .filter((e) => e.type === "compaction")
        .map((c) => verifyCompaction(sm, c, compaction));
    }
    if (opts.verifyBranchSummaries) {
      result.verifyBranchSummaries = entries
        .filter((e) => e.type === "branch_summary")
        .map((b) => verifyBranchSummary(sm, b, contextWindow, branchSummarySettings));
    }
    return result;
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

function branchSummaryBudget(contextWindow, branchSummarySettings) {
  // generateBranchSummary: (model.contextWindow || 128000) - branchSummary.reserveTokens
  return (contextWindow || 128000) - branchSummarySettings.reserveTokens;
}

/** What pi's navigateTree(targetId, {summarize:true}) would collect and where it would write. */
function branchSummaryPreview(sm, oldLeafId, targetId, contextWindow, branchSummarySettings) {
  const targetEntry = sm.getEntry(targetId);
  const tokenBudget = branchSummaryBudget(contextWindow, branchSummarySettings);
  if (!targetEntry) {
    return { oldLeafId, targetId, targetFound: false, tokenBudget };
  }
  if (targetId === oldLeafId) {
    return {
      oldLeafId,
      targetId,
      targetFound: true,
      noOp: "target is the current leaf (pi: navigateTree no-op)",
      tokenBudget,
    };
  }
  const { entries, commonAncestorId } = collectEntriesForBranchSummary(sm, oldLeafId, targetId);
  let newLeafId;
  if (targetEntry.type === "message" && targetEntry.message.role === "user") newLeafId = targetEntry.parentId;
  else if (targetEntry.type === "custom_message") newLeafId = targetEntry.parentId;
  else newLeafId = targetId;
  const prepared = prepareBranchEntries(entries, tokenBudget);
  return {
    oldLeafId,
    targetId,
    targetFound: true,
    commonAncestorId,
    entriesToSummarize: entries.map((e) => e.id),
    newLeafIdAfterNavigation: newLeafId ?? null,
    // pi writes a branch_summary only when there are entries to summarize (summary text set)
    summaryEntryParentId: entries.length > 0 ? (newLeafId ?? null) : null,
    tokenBudget,
    prepared: {
      messageCount: prepared.messages.length,
      roles: prepared.messages.map((m) => m.role),
      totalTokens: prepared.totalTokens,
      fileOps: fileOpsToJson(prepared.fileOps),
      fileLists: computeFileLists(prepared.fileOps),
    },
  };
}

/** Re-run prepareCompaction at the compaction's parent and compare with what was written. */
function verifyCompaction(sm, c, compactionSettings) {
  const before = c.parentId ? sm.getBranch(c.parentId) : [];
  const prep = prepareCompaction(before, compactionSettings);
  const details = c.details && typeof c.details === "object" ? c.details : {};
  const written = {
    firstKeptEntryId: c.firstKeptEntryId,
    tokensBefore: c.tokensBefore,
    readFiles: Array.isArray(details.readFiles) ? details.readFiles : [],
    modifiedFiles: Array.isArray(details.modifiedFiles) ? details.modifiedFiles : [],
    hasSystemMessage: !!c.systemMessage,
    splitTurn: typeof c.summary === "string" && c.summary.includes("**Turn Context (split turn):**"),
  };
  let prepared = null;
  if (prep) {
    const lists = computeFileLists(prep.fileOps);
    prepared = {
      firstKeptEntryId: prep.firstKeptEntryId,
      tokensBefore: prep.tokensBefore,
      isSplitTurn: prep.isSplitTurn,
      readFiles: lists.readFiles,
      modifiedFiles: lists.modifiedFiles,
    };
  }
  const match =
    !!prepared &&
    prepared.firstKeptEntryId === written.firstKeptEntryId &&
    prepared.tokensBefore === written.tokensBefore &&
    prepared.isSplitTurn === written.splitTurn &&
    arraysEqual(prepared.readFiles, written.readFiles) &&
    arraysEqual(prepared.modifiedFiles, written.modifiedFiles);
  return { compactionId: c.id, parentId: c.parentId, fromHook: !!c.fromHook, written, prepared, match };
}

/**
 * Re-collect a branch summary: old leaf = fromId, target = the summary's parent (the leaf pi
 * moved to; for a user-message target pi moved to its parent, which collects the same entries
 * unless that user message was on the old path).
 */
function verifyBranchSummary(sm, b, contextWindow, branchSummarySettings) {
  const oldLeafId = b.fromId === "root" ? null : b.fromId;
  let entries;
  let commonAncestorId;
  if (b.parentId) {
    ({ entries, commonAncestorId } = collectEntriesForBranchSummary(sm, oldLeafId, b.parentId));
  } else {
    entries = oldLeafId ? sm.getBranch(oldLeafId) : [];
    commonAncestorId = null;
  }
  const prepared = prepareBranchEntries(entries, branchSummaryBudget(contextWindow, branchSummarySettings));
  // generateBranchSummary returns no file lists when nothing converts to a message
  // ("No content to summarize"); pi then writes empty lists.
  const lists =
    prepared.messages.length > 0 ? computeFileLists(prepared.fileOps) : { readFiles: [], modifiedFiles: [] };
  const details = b.details && typeof b.details === "object" ? b.details : {};
  const written = {
    readFiles: Array.isArray(details.readFiles) ? details.readFiles : [],
    modifiedFiles: Array.isArray(details.modifiedFiles) ? details.modifiedFiles : [],
  };
  return {
    branchSummaryId: b.id,
    parentId: b.parentId,
    fromId: b.fromId,
    fromHook: !!b.fromHook,
    commonAncestorId,
    entriesToSummarize: entries.map((e) => e.id),
    written,
    prepared: {
      messageCount: prepared.messages.length,
      totalTokens: prepared.totalTokens,
      readFiles: lists.readFiles,
      modifiedFiles: lists.modifiedFiles,
    },
    match: arraysEqual(lists.readFiles, written.readFiles) && arraysEqual(lists.modifiedFiles, written.modifiedFiles),
  };
}

// --------------------------------------------------------------------------------------------
// loadCheck: does pi load what we wrote, with the intended leaf and context?
// --------------------------------------------------------------------------------------------

export async function loadCheck(source, opts = {}) {
  const bytesBefore =
    source.entriesJsonl !== undefined ? Buffer.byteLength(source.entriesJsonl) : statSync(resolve(source.file)).size;
  const { copy, rawHeader, sm } = openCopy(source);
  try {
    const after = readFileSync(copy.path);
    applyLeaf(sm, opts.leaf);
    const entries = sm.getEntries();
    const branch = sm.getBranch();
    const projection = sm.buildSessionProjection();
    const sessionContext = buildSessionContext(entries, sm.getLeafId());
    const messages = [];
    for (const pe of projection.entries) {
      for (const message of pe.messages) {
        messages.push({ entryId: pe.sourceEntry.id, role: message.role, estimateTokens: estimateTokens(message) });
      }
    }
    return {
      piVersion: pi.VERSION,
      file: describeSource(source),
      header: sm.getHeader(),
      rawHeaderVersion: rawHeader && typeof rawHeader === "object" ? (rawHeader.version ?? 1) : null,
      entryCount: entries.length,
      leafId: sm.getLeafId(),
      pathIds: branch.map((e) => e.id),
      pathTypes: branch.map(entryTypeName),
      contextEntries: projection.entries.map((pe) => `${pe.sourceEntry.id} ${entryTypeName(pe.sourceEntry)}`),
      contextMessages: messages,
      sessionContextRoles: sessionContext.messages.map((m) => m.role),
      model: projection.model ?? null,
      thinkingLevel: projection.thinkingLevel,
      bytesBefore,
      bytesAfterOpen: after.length,
      // false = pi rewrote the copy on open (v1/v2 migration) or appended a missing "\n"
      unchangedOnOpen: after.length === bytesBefore && sameContent(source, after),
    };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

function sameContent(source, after) {
  const before =
    source.entriesJsonl !== undefined ? Buffer.from(source.entriesJsonl) : readFileSync(resolve(source.file));
  return before.equals(after);
}

// --------------------------------------------------------------------------------------------
// llm: what pi sends — projected messages, convertToLlm, pi-ai's transformMessages, pairing
// --------------------------------------------------------------------------------------------

function digestOf(value) {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex");
}

/** The model transformMessages is given: same provider/api/model as the random sessions, images allowed. */
const TRANSFORM_MODEL = { id: "m", provider: "p", api: "openai-completions", input: ["text", "image"] };
const TAG = "__piContextSource";

/**
 * `{file | entriesJsonl, leaf?}` → the projection at the leaf with full messages, pi's projected
 * estimate, and what pi-ai's `transformMessages(convertToLlm(messages))` makes of it: one shape per
 * sent message (`entryId` null for pi-ai's synthetic results) and the pairing derived from that
 * output only — `orphanResults`: real tool results the provider would reject (not in the run of
 * results directly after an assistant making that call, or a second result for a call);
 * `fillers`: synthetic "No result provided" results (with the assistant whose call they answer).
 * With `digest: true` each projected entry carries `digest` (sha256 of its messages' JSON) and its
 * `messages` only when its id is in `fullFor` (big sessions compare faster).
 */
export async function llmView(source, opts = {}) {
  const { copy, sm } = openCopy(source);
  try {
    applyLeaf(sm, opts.leaf);
    const branch = sm.getBranch();
    const projection = sm.buildSessionProjection();
    const tagged = [];
    for (const pe of projection.entries) {
      for (const m of convertToLlm(pe.messages)) tagged.push({ ...m, [TAG]: pe.sourceEntry.id });
    }
    const out = transformMessages(tagged, TRANSFORM_MODEL);
    const transformed = out.map((m) => {
      const shape = { role: m.role, entryId: m[TAG] ?? null };
      if (m.role === "toolResult") shape.toolCallId = m.toolCallId;
      if (m.role === "assistant") shape.calls = m.content.filter((b) => b.type === "toolCall").map((b) => b.id);
      return shape;
    });
    const orphanResults = [];
    const fillers = [];
    let last = null;
    let answered = new Set();
    for (const m of transformed) {
      if (m.role !== "toolResult") {
        last = m;
        answered = new Set();
        continue;
      }
      const calls = last?.role === "assistant" ? last.calls : [];
      const paired = calls.includes(m.toolCallId) && !answered.has(m.toolCallId);
      answered.add(m.toolCallId);
      if (m.entryId === null) fillers.push({ callEntryId: last?.entryId ?? null, toolCallId: m.toolCallId, paired });
      else if (!paired) orphanResults.push({ entryId: m.entryId, toolCallId: m.toolCallId });
    }
    const estimate = estimateProjectedContextTokens(projection, branch);
    return {
      piVersion: pi.VERSION,
      leafId: sm.getLeafId(),
      projected: projection.entries.map((pe) =>
        opts.digest && !opts.fullFor?.includes(pe.sourceEntry.id)
          ? { entryId: pe.sourceEntry.id, digest: digestOf(pe.messages) }
          : {
              entryId: pe.sourceEntry.id,
              messages: pe.messages,
              ...(opts.digest ? { digest: digestOf(pe.messages) } : {}),
            },
      ),
      estimate: {
        tokens: estimate.tokens,
        usageTokens: estimate.usageTokens,
        trailingTokens: estimate.trailingTokens,
        lastUsageIndex: estimate.lastUsageIndex,
      },
      transformed,
      orphanResults,
      fillers,
    };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

/**
 * `{file | entriesJsonl, leaf?, edits: [{targetId, replacement}]}` → pi's
 * `SessionManager.appendContextEdit` for each edit in order on a private copy (later edits see the
 * earlier ones): `{ok: true, id, line}` (the entry as pi serialises it) or `{ok: false, error}`.
 */
export async function contextEditView(source, opts = {}, edits = []) {
  const { copy, sm } = openCopy(source);
  try {
    applyLeaf(sm, opts.leaf);
    const results = edits.map((edit) => {
      try {
        const id = sm.appendContextEdit(edit.targetId, edit.replacement);
        return { ok: true, id, line: JSON.stringify(sm.getEntry(id)) };
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error.message : String(error) };
      }
    });
    return { piVersion: pi.VERSION, results, leafId: sm.getLeafId() };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------------
// failures: where pi's own code throws (or gives NaN) on a session, step by step
// --------------------------------------------------------------------------------------------

/** `{ok: value}` (NaN as the string "NaN"), or `{error: message}` when `run` throws. */
function attempt(run) {
  try {
    const value = run();
    return { ok: typeof value === "number" && Number.isNaN(value) ? "NaN" : value };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/** An entry id as JSON shows it, whatever it is (a string, a number, an object, undefined → null). */
function idOf(id) {
  return id === undefined ? null : id;
}

/**
 * `{file | entriesJsonl, leaf?}` → each step of opening and measuring a session the way pi does, with
 * pi's result or the error it throws: `open` (`SessionManager.open`), `leafId` (+ `leafIdType`: a
 * non-string leaf is what a last line without a string id leaves), `branch` (`getBranch()` ids),
 * `projection` (`buildSessionProjection()`: per entry, its messages' roles), `sessionContext`
 * (`buildSessionContext()` message count), `messages` (`estimateTokens` per projected message),
 * `contextEstimate` (`estimateContextTokens(messages)`), `estimate`
 * (`estimateProjectedContextTokens(projection, branch)`: pi's footer and threshold) and
 * `prepareCompaction` (default settings: `tokensBefore`, `firstKeptEntryId`, or null).
 * Never run it on a session whose branch loops (getBranch would not return).
 */
export async function failuresView(source, opts = {}) {
  let opened;
  const open = attempt(() => {
    opened = openCopy(source);
    return true;
  });
  if (!opened) return { piVersion: pi.VERSION, open };
  const { copy, sm } = opened;
  try {
    applyLeaf(sm, opts.leaf);
    const leafId = sm.getLeafId();
    let branch;
    let projection;
    const result = {
      piVersion: pi.VERSION,
      open,
      leafId: idOf(leafId),
      leafIdType: typeof leafId,
      entryCount: sm.getEntries().length,
      branch: attempt(() => {
        branch = sm.getBranch();
        return branch.map((e) => idOf(e?.id));
      }),
      projection: attempt(() => {
        projection = sm.buildSessionProjection();
        return projection.entries.map((pe) => ({
          entryId: idOf(pe.sourceEntry?.id),
          roles: pe.messages.map((m) => m?.role ?? null),
        }));
      }),
      sessionContext: attempt(() => sm.buildSessionContext().messages.length),
    };
    if (projection) {
      result.messages = projection.entries.flatMap((pe) =>
        pe.messages.map((m) => ({
          entryId: idOf(pe.sourceEntry?.id),
          role: m?.role ?? null,
          tokens: attempt(() => estimateTokens(m)),
        })),
      );
      result.contextEstimate = attempt(() => estimateContextTokens(projection.messages).tokens);
      result.estimate = attempt(() => estimateProjectedContextTokens(projection, branch ?? []).tokens);
    }
    if (branch)
      result.prepareCompaction = attempt(() => {
        const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });
        return prep ? { tokensBefore: prep.tokensBefore, firstKeptEntryId: prep.firstKeptEntryId } : null;
      });
    return result;
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------------
// pi-open-check: what SessionManager.open (and one append) does to the bytes of a copy
// --------------------------------------------------------------------------------------------

const APPENDED_TEXT = "pi-open-check: entry appended through SessionManager.appendMessage";

export async function piOpenCheck(source, opts = {}) {
  const before =
    source.entriesJsonl !== undefined ? Buffer.from(source.entriesJsonl) : readFileSync(resolve(source.file));
  const { copy, sm } = openCopy(source);
  try {
    const afterOpen = readFileSync(copy.path);
    const isPrefixPreserved = afterOpen.length >= before.length && afterOpen.subarray(0, before.length).equals(before);
    const result = {
      piVersion: pi.VERSION,
      file: describeSource(source),
      bytesBefore: before.length,
      leafId: sm.getLeafId(),
      entryCount: sm.getEntries().length,
      header: sm.getHeader(),
      bytesAfterOpen: afterOpen.length,
      unchangedOnOpen: afterOpen.equals(before),
      isPrefixPreserved,
      appendedOnOpen: isPrefixPreserved ? JSON.stringify(afterOpen.subarray(before.length).toString("utf-8")) : null,
      entries: sm.getEntries().map((e) => {
        const out = { id: e.id, parentId: e.parentId, type: e.type };
        if (e.type === "compaction") out.firstKeptEntryId = e.firstKeptEntryId;
        return out;
      }),
    };
    if (opts.append) {
      const appendedId = sm.appendMessage({
        role: "user",
        content: [{ type: "text", text: APPENDED_TEXT }],
        timestamp: Date.now(),
      });
      const text = readFileSync(copy.path, "utf-8");
      const lines = text.split("\n");
      if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
      result.appendedId = appendedId;
      result.lastTwoPhysicalLines = lines.slice(-2).map((line) => line.slice(0, 90));
      const reloaded = SessionManager.open(copy.path);
      result.reloaded = reloaded.getEntries().map((e) => `${e.id}<-${e.parentId}`);
    }
    return result;
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------------
// fork: pi's /fork and /clone on a copy (AgentSessionRuntime.fork's position rule, then
// SessionManager.createBranchedSession in the copy's folder)
// --------------------------------------------------------------------------------------------

/** pi's `extractUserMessageText` (agent-session-runtime.js, not exported). */
function extractUserMessageText(content) {
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("");
}

/**
 * `{file | entriesJsonl, entryId, position?: "before" | "at"}` (default "before", as pi's `fork`) →
 * `{ targetLeafId, selectedText, empty, written, parentSession, lines }`: what pi's runtime does —
 * `empty` when pi starts a new empty session (no target leaf), else the branched file's lines
 * (`written: false` when pi holds it in memory: no conversation). Errors are pi's own.
 */
export async function forkView(source, request) {
  const { copy, sm } = openCopy(source);
  try {
    const position = request.position ?? "before";
    const selectedEntry = sm.getEntry(request.entryId);
    if (!selectedEntry) throw new Error("Invalid entry ID for forking");
    let targetLeafId;
    let selectedText;
    if (position === "at") targetLeafId = selectedEntry.id;
    else {
      if (selectedEntry.type !== "message" || selectedEntry.message.role !== "user")
        throw new Error("Invalid entry ID for forking");
      targetLeafId = selectedEntry.parentId;
      selectedText = extractUserMessageText(selectedEntry.message.content);
    }
    if (!targetLeafId) return { targetLeafId: null, selectedText: selectedText ?? null, empty: true };
    const before = new Set(readdirSync(copy.dir));
    const file = sm.createBranchedSession(targetLeafId);
    const written = existsSync(file);
    const created = readdirSync(copy.dir).filter((f) => !before.has(f));
    return {
      targetLeafId,
      selectedText: selectedText ?? null,
      empty: false,
      written,
      parentSession: copy.path,
      fileName: basename(file),
      created,
      lines: written
        ? readFileSync(file, "utf8")
            .split("\n")
            .filter((l) => l)
            .map((l) => JSON.parse(l))
        : null,
    };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------------
// Session listing: pi's getDefaultSessionDir / SessionManager.list / continueRecent on a copy
// --------------------------------------------------------------------------------------------

function copyTree(from, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst);
    else if (entry.isFile()) copyFileSync(src, dst);
  }
}

/**
 * `request` = { agentDir (holds sessions/), cwds: [...], continueRecent?: [...],
 * explicitSessionDir?: "<dir relative to agentDir whose *.jsonl files are listed again from a
 * separate, non-default directory>", mtimes?: {"<path relative to agentDir>": epochMs} }.
 * Only the agent dir's sessions/ tree is copied; pi works on the copy.
 */
/**
 * pi's own listing of one folder: `SessionManager.listAll(dir)` (pi's `buildSessionInfo` per file,
 * sorted by pi's `modified`), as `{path, id, cwd, name, parentSessionPath, messageCount, firstMessage,
 * modified}` rows. `{type: "sessionInfos", dir}`; the files are only read.
 */
export async function sessionInfos(request) {
  if (typeof request.dir !== "string") throw new Error("sessionInfos needs dir");
  const infos = await SessionManager.listAll(resolve(request.dir));
  return infos.map((s) => ({
    path: s.path,
    id: s.id,
    cwd: s.cwd,
    name: s.name ?? null,
    parentSessionPath: s.parentSessionPath ?? null,
    messageCount: s.messageCount,
    firstMessage: s.firstMessage,
    modified: s.modified.getTime(),
  }));
}

/**
 * pi's `/resume` list as its TUI shows it: `SessionSelectorComponent` (threaded, its default sort)
 * over `SessionManager.list(cwd, dir)` (`scope: "current"`, default) or, after pi's scope toggle,
 * `SessionManager.listAll()` of the default sessions folder of `agentDir` (`scope: "all"`), read
 * from the component's list once loaded: `{path, depth, modified, label}` rows in display order
 * (`label`: pi's `name ?? firstMessage`). `{type: "resumeList", cwd, dir, scope?, agentDir?}`; the
 * files are only read.
 */
export async function resumeList(request) {
  if (typeof request.dir !== "string" || typeof request.cwd !== "string")
    throw new Error("resumeList needs cwd and dir");
  if (request.scope === "all" && typeof request.agentDir !== "string") throw new Error("resumeList all needs agentDir");
  const { SessionSelectorComponent } = await import(piUrl("modes/interactive/components/session-selector.js"));
  const dir = resolve(request.dir);
  const all = request.scope === "all";
  let loaded;
  const done = new Promise((r) => (loaded = r));
  const watch = (promise) => {
    promise.then(loaded, loaded);
    return promise;
  };
  const current = (onProgress, signal) => watch(pi.SessionManager.list(request.cwd, dir, onProgress, signal));
  const every = (onProgress, signal) => watch(pi.SessionManager.listAll(onProgress, signal));
  const noop = () => {};
  const selector = new SessionSelectorComponent(current, every, noop, noop, noop, noop, {}, undefined);
  await done;
  if (all) {
    // pi's scope toggle (Tab) loads listAll of the default sessions folder into the same list
    const again = new Promise((r) => (loaded = r));
    const before = process.env.PI_CODING_AGENT_DIR;
    process.env.PI_CODING_AGENT_DIR = resolve(request.agentDir);
    try {
      selector.toggleScope();
      await again;
    } finally {
      process.env.PI_CODING_AGENT_DIR = before;
    }
  }
  await new Promise((r) => setImmediate(r));
  return selector.sessionList.filteredSessions.map((node) => ({
    path: node.session.path,
    depth: node.depth,
    modified: node.session.modified.getTime(),
    label: node.session.name ?? node.session.firstMessage,
  }));
}

export async function sessionListing(request) {
  if (typeof request.agentDir !== "string") throw new Error("listing needs agentDir");
  const source = resolve(request.agentDir);
  const agent = newTmpDir("listing-agent");
  try {
    if (existsSync(join(source, "sessions"))) copyTree(join(source, "sessions"), join(agent, "sessions"));
    for (const [rel, ms] of Object.entries(request.mtimes ?? {})) {
      const when = new Date(ms);
      utimesSync(join(agent, rel), when, when);
    }
    process.env.PI_CODING_AGENT_DIR = agent;
    const cwds = request.cwds ?? [];
    const describe = (infos) => infos.map((s) => `${s.id} cwd=${s.cwd}`).sort();
    const result = { piVersion: pi.VERSION, platform: process.platform, encode: {}, list: {} };
    for (const cwd of cwds) {
      result.encode[cwd] = relative(agent, sessionMod.getDefaultSessionDir(cwd, agent)).split(sep).join("/");
    }
    for (const cwd of cwds) result.list[cwd] = describe(await SessionManager.list(cwd));
    if (request.explicitSessionDir) {
      const explicitDir = newTmpDir("explicit-sessions");
      const from = join(agent, request.explicitSessionDir);
      for (const name of readdirSync(from)) {
        if (!name.endsWith(".jsonl")) continue;
        copyFileSync(join(from, name), join(explicitDir, name));
        const st = statSync(join(from, name));
        utimesSync(join(explicitDir, name), st.atime, st.mtime);
      }
      result.listWithExplicitDir = {};
      for (const cwd of cwds) result.listWithExplicitDir[cwd] = describe(await SessionManager.list(cwd, explicitDir));
    }
    if (request.continueRecent) {
      result.continueRecent = {};
      for (const cwd of request.continueRecent) {
        const sm = SessionManager.continueRecent(cwd);
        result.continueRecent[cwd] = {
          sessionId: sm.getSessionId(),
          headerCwd: sm.getHeader()?.cwd ?? null,
          sessionManagerCwd: sm.getCwd(),
        };
      }
    }
    return result;
  } finally {
    rmSync(agent, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------------
// Model catalog as pi's ModelRuntime resolves it (for src/core/data/model-catalog.json)
// --------------------------------------------------------------------------------------------

/** Every chat model pi's registry knows for this agent dir: {"<provider>/<id>": {contextWindow, maxTokens, name, reasoning, cost}}. */
export async function modelCatalog(request = {}) {
  const view = agentView(request.agentDir, request.agentFiles);
  const { runtime } = await getModelRuntime(view);
  const models = {};
  for (const m of runtime.getModels()) {
    models[`${m.provider}/${m.id}`] = {
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
      name: m.name,
      reasoning: m.reasoning === true,
      cost: m.cost,
    };
  }
  const result = { piVersion: pi.VERSION, count: Object.keys(models).length, models };
  const registryError = runtime.getError?.();
  if (registryError) result.registryError = registryError;
  return result;
}

// --------------------------------------------------------------------------------------------
// Usage, cost and cache misses as pi's footer and /session count them (for rules/usage.ts, rules/cache.ts)
// --------------------------------------------------------------------------------------------

const usageTotalsMod = await import(piUrl("core/usage-totals.js"));
const cacheStatsMod = await import(piUrl("core/cache-stats.js"));
let themeReady = false;

/**
 * `request` = { file | entriesJsonl, agentDir? | agentFiles? }. Everything by pi's own code on the
 * file's entries (`getEntries()`, all branches): `AgentSession.prototype.getSessionStats` on a
 * stand-in session (it only reads `sessionManager`), the real `FooterComponent`'s stats line
 * (rendered with the dark theme, ANSI stripped; the context part is left out), the footer's
 * `getSessionStats().latestCacheHitRate`, `getUsageCostBreakdown(entries)`, and the cache
 * scan (`computeCacheWaste`, `collectCacheMisses` with pi's ModelRuntime for prices) with each
 * miss attributed to its entry id.
 */
export async function usageStats(source, opts = {}) {
  const view = agentView(opts.agentDir, opts.agentFiles);
  const { copy, sm } = openCopy(source);
  try {
    const { runtime } = await getModelRuntime(view);
    const entries = sm.getEntries();
    const stand = {
      sessionManager: sm,
      sessionFile: copy.path,
      sessionId: sm.getSessionId(),
      getContextUsage: () => undefined,
    };
    const stats = pi.AgentSession.prototype.getSessionStats.call(stand);
    if (!themeReady) {
      pi.initTheme("dark");
      themeReady = true;
    }
    const model = { id: "m", provider: "p", contextWindow: 0, reasoning: false };
    const fakeSession = {
      sessionManager: sm,
      routedModel: undefined,
      model,
      state: { model, thinkingLevel: "off" },
      modelRuntime: { isUsingSubscription: () => false },
      getContextUsage: () => undefined,
    };
    const footer = new pi.FooterComponent(fakeSession, {
      getGitBranch: () => null,
      getAvailableProviderCount: () => 1,
      getExtensionStatuses: () => new Map(),
    });
    const line = footer
      .render(400)[1]
      .replace(/\x1b\[[0-9;]*m/g, "")
      .trimEnd();
    // the stats part ends before the context percentage ("0.0%/0 (auto)")
    const statsPart = line.replace(/\s*\S+%\/\S+( \(auto\))?\s+m$/, "").trimEnd();
    const footerStats = footer.getSessionStats();
    const misses = cacheStatsMod.collectCacheMisses(entries, runtime);
    const missList = [];
    for (const entry of entries) {
      if (entry.type !== "message") continue;
      const miss = misses.get(entry.message);
      if (miss) missList.push({ entryId: entry.id, ...miss });
    }
    return {
      piVersion: pi.VERSION,
      tokens: stats.tokens,
      cost: stats.cost,
      messages: {
        total: stats.totalMessages,
        user: stats.userMessages,
        assistant: stats.assistantMessages,
        toolCalls: stats.toolCalls,
        toolResults: stats.toolResults,
      },
      footerTotals: footerStats.usageTotals,
      latestCacheHitRate: footerStats.latestCacheHitRate ?? null,
      footerStats: statsPart,
      breakdown: usageTotalsMod.getUsageCostBreakdown(entries),
      cacheWaste: cacheStatsMod.computeCacheWaste(entries, runtime),
      cacheMisses: missList,
      cacheTtlMs: cacheStatsMod.CACHE_TTL_MS,
    };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

/**
 * pi's system message at the leaf: `{file | entriesJsonl, leaf?}` → `{piVersion, leafId, estimate,
 * system}` where `estimate` = `estimateTokens(getCurrentSystemMessage(projection messages))` (0
 * without one) and `system` = null or the replayed message's measures: `contentLength`, each
 * section's `.length` by name (in order), each tool's `name` and `JSON.stringify(tool).length`,
 * `toolsJsonLength` = `JSON.stringify(toolsAdded).length`, and the texts of `project_context` and
 * `skills` (what pi-context splits by file and skill).
 */
export async function systemMessageView(source, opts = {}) {
  const { copy, sm } = openCopy(source);
  try {
    applyLeaf(sm, opts.leaf);
    const messages = sm.buildSessionProjection().entries.flatMap((pe) => pe.messages);
    const system = transcriptMod.getCurrentSystemMessage(messages);
    return {
      piVersion: pi.VERSION,
      leafId: sm.getLeafId(),
      estimate: system ? estimateTokens(system) : 0,
      system: system
        ? {
            contentLength: typeof system.content === "string" ? system.content.length : null,
            sections: Object.entries(system.sections ?? {}).map(([name, text]) => ({ name, length: text.length })),
            tools: (system.toolsAdded ?? []).map((tool) => ({
              name: tool.name,
              jsonLength: JSON.stringify(tool).length,
            })),
            toolsJsonLength: system.toolsAdded ? JSON.stringify(system.toolsAdded).length : 0,
            texts: {
              project_context: system.sections?.project_context ?? null,
              skills: system.sections?.skills ?? null,
            },
          }
        : null,
    };
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

/**
 * `request` = { provider, modelId, usages: [{input, output, cacheRead, cacheWrite, cacheWrite1h?}],
 * agentDir? | agentFiles? }: pi-ai's `calculateCost(model, usage)` for each usage, on the model
 * pi's registry resolves (null when it knows none).
 */
export async function costOf(request) {
  const view = agentView(request.agentDir, request.agentFiles);
  const { runtime } = await getModelRuntime(view);
  const ai = await import("@earendil-works/pi-ai");
  const model = runtime.getModel(request.provider, request.modelId);
  if (!model) return { model: null, costs: null };
  const costs = (request.usages ?? []).map((u) =>
    ai.calculateCost(model, {
      ...u,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    }),
  );
  return { model: { provider: model.provider, id: model.id, cost: model.cost }, costs };
}

// --------------------------------------------------------------------------------------------
// Requests (CLI and batch share this)
// --------------------------------------------------------------------------------------------

/**
 * One request: `{type?: "oracle"|"loadCheck"|"piOpen"|"llm"|"contextEdit"|"usage"|"systemMessage", file | entriesJsonl,
 * args?: string[], agentDir?, agentFiles?, leaf?, append?, edits?}`, `{type: "listing", ...}` (see sessionListing),
 * `{type: "catalog", agentDir?, agentFiles?}` (see modelCatalog), `{type: "sessionInfos", dir}` (see sessionInfos) or
 * `{type: "classify", messages, contextWindow?}` (see classifyAnswers).
 * Returns the result object (throws on error).
 */
/**
 * pi-ai's verdicts on failed answers: `{type: "classify", messages: [assistant message…],
 * contextWindow?}` → `{overflowPatterns: ["source/flags"…], verdicts: [{overflow, retryable}…]}`
 * (`isContextOverflow(message, contextWindow)`, `isRetryableAssistantError(message)`,
 * `getOverflowPatterns()`).
 */
function classifyAnswers(request) {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const window = typeof request.contextWindow === "number" ? request.contextWindow : undefined;
  return {
    overflowPatterns: piAi.getOverflowPatterns().map((p) => `${p.source}/${p.flags}`),
    verdicts: messages.map((m) => ({
      overflow: piAi.isContextOverflow(m, window),
      retryable: piAi.isRetryableAssistantError(m),
    })),
  };
}

export async function handleRequest(request) {
  if (!request || typeof request !== "object") throw new Error("request must be a JSON object");
  const type = request.type ?? "oracle";
  if (type === "listing") return sessionListing(request);
  if (type === "sessionInfos") return sessionInfos(request);
  if (type === "resumeList") return resumeList(request);
  if (type === "catalog") return modelCatalog(request);
  if (type === "cost") return costOf(request);
  if (type === "classify") return classifyAnswers(request);
  const hasFile = typeof request.file === "string";
  const hasContent = typeof request.entriesJsonl === "string";
  if (hasFile === hasContent) throw new Error("request needs exactly one of `file` or `entriesJsonl`");
  const source = hasFile ? { file: request.file } : { entriesJsonl: request.entriesJsonl };
  const opts = parseOracleArgs(Array.isArray(request.args) ? request.args : []);
  if (opts.positional.length > 0)
    throw new Error(`unexpected positional arguments in args: ${opts.positional.join(" ")}`);
  if (request.agentDir !== undefined) opts.agentDir = request.agentDir;
  if (request.agentFiles !== undefined) opts.agentFiles = request.agentFiles;
  if (request.leaf !== undefined) opts.leaf = request.leaf;
  switch (type) {
    case "oracle":
      return analyzeSession(source, opts);
    case "loadCheck":
      return loadCheck(source, opts);
    case "piOpen":
      return piOpenCheck(source, { append: !!request.append });
    case "llm":
      return llmView(source, {
        ...opts,
        digest: request.digest === true,
        fullFor: Array.isArray(request.fullFor) ? request.fullFor : [],
      });
    case "contextEdit":
      return contextEditView(source, opts, Array.isArray(request.edits) ? request.edits : []);
    case "usage":
      return usageStats(source, opts);
    case "systemMessage":
      return systemMessageView(source, opts);
    case "fork":
      return forkView(source, request);
    case "failures":
      return failuresView(source, opts);
    default:
      throw new Error(`unknown request type ${JSON.stringify(type)}`);
  }
}

// --------------------------------------------------------------------------------------------
// JSON output in the layout of the shared oracle files (arrays of scalars on one line)
// --------------------------------------------------------------------------------------------

export function formatJson(value, indent = "") {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) {
      return `[${value.map((v) => JSON.stringify(v) ?? "null").join(", ")}]`;
    }
    return `[\n${value.map((v) => inner + formatJson(v, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).filter((k) => value[k] !== undefined);
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${formatJson(value[k], inner)}`).join(",\n")}\n${indent}}`;
}
