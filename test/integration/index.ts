// Mocha entry for integration tests, loaded by VS Code as `extensionTestsPath` and run inside
// the real extension host (code-server's Node extension host under scripts/run-integration.mjs;
// a desktop VS Code under @vscode/test-cli uses its own runner with the same *.test.js files).
//
// Environment (set by scripts/run-integration.mjs, read here):
//   PI_CONTEXT_TEST_REPORT   file to write the reporter output to (the extension host's console
//                            goes to the browser console, so the runner prints this file)
//   PI_CONTEXT_TEST_GREP     only run tests whose full title matches this (regexp source)
//   PI_CONTEXT_TEST_TIMEOUT  per-test timeout in ms (default 20000)
import * as fs from "fs";
import * as path from "path";
import Mocha from "mocha";

function findTestFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTestFiles(full));
    else if (entry.isFile() && entry.name.endsWith(".test.js")) out.push(full);
  }
  return out.sort();
}

/** Writes spec-like lines to the console and, if configured, to a report file. */
function makeReporter(reportFile: string | undefined) {
  if (reportFile) {
    fs.mkdirSync(path.dirname(reportFile), { recursive: true });
    fs.writeFileSync(reportFile, "");
  }
  const write = (line: string) => {
    console.log(line);
    if (reportFile) fs.appendFileSync(reportFile, line + "\n");
  };
  const { EVENT_SUITE_BEGIN, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } =
    Mocha.Runner.constants;

  return class PiContextReporter extends Mocha.reporters.Base {
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
      super(runner, options);
      let passed = 0;
      let pending = 0;
      const failures: { title: string; err: Error }[] = [];
      const depth = (s: Mocha.Suite | Mocha.Runnable) => {
        let d = 0;
        for (let p = s.parent; p && !p.root; p = p.parent) d++;
        return d;
      };
      const indent = (n: number) => "  ".repeat(n);
      runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
        if (!suite.root) write(`${indent(depth(suite))}${suite.title}`);
      });
      runner.on(EVENT_TEST_PASS, (test: Mocha.Test) => {
        passed++;
        write(`${indent(depth(test))}✔ ${test.title} (${test.duration ?? 0} ms)`);
      });
      runner.on(EVENT_TEST_PENDING, (test: Mocha.Test) => {
        pending++;
        write(`${indent(depth(test))}- ${test.title} (pending)`);
      });
      runner.on(EVENT_TEST_FAIL, (test: Mocha.Test, err: Error) => {
        failures.push({ title: test.fullTitle(), err });
        write(`${indent(depth(test))}✖ ${failures.length}) ${test.title}`);
      });
      runner.once(EVENT_RUN_END, () => {
        if (failures.length) {
          write("");
          failures.forEach((f, i) => {
            write(`${i + 1}) ${f.title}`);
            write(
              `   ${String(f.err?.stack ?? f.err)
                .split("\n")
                .join("\n   ")}`,
            );
          });
        }
        write("");
        if (pending) write(`${pending} pending`);
        write(`${passed} passed, ${failures.length} failed`);
      });
    }
  };
}

export async function run(): Promise<void> {
  const reportFile = process.env.PI_CONTEXT_TEST_REPORT || undefined;
  const grep = process.env.PI_CONTEXT_TEST_GREP || undefined;
  const timeout = Number(process.env.PI_CONTEXT_TEST_TIMEOUT || 20000);
  const mocha = new Mocha({
    ui: "bdd",
    color: false,
    timeout,
    reporter: makeReporter(reportFile) as unknown as string,
    ...(grep ? { grep: new RegExp(grep) } : {}),
  });
  const files = findTestFiles(__dirname);
  if (files.length === 0) throw new Error(`no *.test.js files under ${__dirname}`);
  for (const f of files) mocha.addFile(f);

  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => {
        if (failures > 0) reject(new Error(`${failures} test(s) failed`));
        else resolve();
      });
    } catch (err) {
      reject(err);
    }
  });
}
