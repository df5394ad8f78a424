/**
 * The PATH of the user's login shell (VS Code's may differ: desktop launchers, nvm in `~/.zshrc`), read
 * like VS Code does: `$SHELL -i -l -c` with stdin closed, PATH between markers. Never on Windows; cached.
 */

import { spawn } from "node:child_process";

const START = "__PI_CONTEXT_PATH_START__";
const END = "__PI_CONTEXT_PATH_END__";

const cache = new Map<string, Promise<string | undefined>>();

export interface ShellPathOptions {
  /** Default `$SHELL`, else `/bin/sh`. */
  shell?: string;
  env?: NodeJS.ProcessEnv;
  /** ms, default 4000. */
  timeoutMs?: number;
  refresh?: boolean;
  platform?: NodeJS.Platform;
}

/** PATH as the login shell sets it; undefined on Windows, timeout or failure. Never rejects. */
export function loginShellPath(options: ShellPathOptions = {}): Promise<string | undefined> {
  if ((options.platform ?? process.platform) === "win32") return Promise.resolve(undefined);
  const env = options.env ?? process.env;
  const shell = options.shell ?? env.SHELL ?? "/bin/sh";
  const hit = cache.get(shell);
  if (hit && !options.refresh) return hit;
  const answer = ask(shell, env, options.timeoutMs ?? 4000);
  cache.set(shell, answer);
  return answer;
}

function ask(shell: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let out = "";
    let settled = false;
    const finish = (value: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(shell, ["-i", "-l", "-c", `printf '%s%s%s' '${START}' "$PATH" '${END}'`], {
        env: { ...env, PI_CONTEXT_RESOLVING_SHELL_PATH: "1" },
        stdio: ["ignore", "pipe", "ignore"],
        detached: true,
        windowsHide: true,
      });
    } catch {
      resolve(undefined);
      return;
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      finish(undefined);
    }, timeoutMs);
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (d: string) => {
      out += d;
      if (out.length > 1_000_000) out = out.slice(-100_000);
    });
    child.on("error", () => finish(undefined));
    child.on("close", () => {
      const start = out.lastIndexOf(START);
      const end = out.indexOf(END, start);
      finish(start >= 0 && end > start ? out.slice(start + START.length, end) : undefined);
    });
  });
}

const npmRoots = new Map<string, Promise<string | undefined>>();

/** `npm root -g` with `pathValue` as PATH, cached; undefined on failure. Only when files alone found no pi. */
export function npmGlobalRoot(
  pathValue: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 4000,
): Promise<string | undefined> {
  const key = pathValue ?? "";
  const hit = npmRoots.get(key);
  if (hit) return hit;
  const answer = new Promise<string | undefined>((resolve) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    try {
      const child = spawn(npm, ["root", "-g"], {
        env: { ...env, ...(pathValue !== undefined ? { PATH: pathValue } : {}), npm_config_update_notifier: "false" },
        stdio: ["ignore", "pipe", "ignore"],
        windowsHide: true,
        shell: process.platform === "win32",
      });
      let out = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (d: string) => (out += d));
      child.on("error", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        const line = out.trim().split("\n").pop()?.trim();
        resolve(code === 0 && line ? line : undefined);
      });
    } catch {
      resolve(undefined);
    }
  });
  npmRoots.set(key, answer);
  return answer;
}
