// The package in every environment a user installs it into: each small app under apps/ is built
// by its tool against the installed tarball (check installs it), served, and run (in headless
// Chromium, or in Node) against the fixture server's scenario `429-then-200`: 429 with
// `Retry-After: 1`, then 200 with the list. Each run is checked three ways: what the app got
// (outcome, attempts, last status, body), what the server's log saw (`GET /log?run=ID`: two
// requests, the second no sooner than a second after the 429 was sent), and that the page threw
// nothing. A tool that needs a step gets exactly the one docs/environments.md tells users (the
// `step` column); none is handed the wasm's bytes. Ends with a table of environments and
// `N passed, N failed`; exits 1 if any failed.
//
// Usage (check does this): node tests/packages/run.mjs
import { execFile, spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual, promisify } from "node:util";

import { nodeResolve } from "@rollup/plugin-node-resolve";
import { build as esbuild } from "esbuild";
import { chromium } from "playwright-core";
import { rollup } from "rollup";
import { build as viteBuild, preview as vitePreview, createServer as viteServer } from "vite";
import webpack from "webpack";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const apps = path.join(here, "apps");
const out = path.join(root, "target/packages");
const appDir = (name) => path.join(out, name);
const viteCache = path.join(out, ".vite-cache");

/** The flags Chromium needs here: headless as root, and no calls to hosts this network refuses. */
const CHROMIUM_ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
];
const SCENARIO = "429-then-200";
const COPY_WASM = "copy the .wasm next to the bundle";
const TIMEOUT_MS = 20_000;

/**
 * What every run must get. The apps read with the default policy, not the scenario's own; the
 * scenario plays the same under it (the one wait is the server's 1 s, at the 1 s floor, and the
 * second attempt ends far inside 20 s), so its `expect` gives the outcome, the attempt count
 * and the last status, and its last scripted response gives the body. Its times are for its own
 * policy and are not compared.
 */
function expected() {
  const file = JSON.parse(readFileSync(path.join(root, "fixtures/hostile-servers.json"), "utf8"));
  const scenario = file.scenarios.find((s) => s.name === SCENARIO);
  const { outcome, attempts, last_status: status } = scenario.expect;
  return { outcome, attempts, status, body: scenario.responses.at(-1).body };
}

// ---- Building the apps: each as its tool's user would, with the one step the docs name. ----

/** Runs webpack on `config` (production mode, from apps/). */
function webpackBuild(config) {
  return new Promise((resolve, reject) =>
    webpack({ mode: "production", context: apps, ...config }, (error, stats) => {
      if (error || stats.hasErrors()) {
        reject(new Error(error?.message ?? stats.toString("errors-only")));
      } else {
        resolve();
      }
    }),
  );
}

async function buildWebpack() {
  await webpackBuild({
    entry: "./page/main.js",
    output: { path: appDir("webpack"), filename: "main.js", clean: true },
  });
  copyFileSync(path.join(apps, "webpack/index.html"), path.join(appDir("webpack"), "index.html"));
}

/**
 * The Node app bundled by webpack for Node, as a server-side build would be: webpack takes the
 * package's Node entry and, since `sideEffects` names it, keeps it even though the app only
 * uses what it re-exports (with `"sideEffects": false` it would skip it, and nothing would
 * start the module).
 */
async function buildWebpackNode() {
  await webpackBuild({
    target: "node",
    entry: "./node/main.mjs",
    output: { path: appDir("webpack-node"), filename: "main.cjs", clean: true },
  });
}

/** Builds apps/`source` into target/packages/`name`. `base: "./"` only because the app is
 *  served under /apps/NAME/ rather than at the root. */
async function buildVite(source, name) {
  await viteBuild({
    configFile: false,
    root: path.join(apps, source),
    base: "./",
    cacheDir: viteCache,
    logLevel: "warn",
    build: { outDir: appDir(name), emptyOutDir: true },
  });
}

async function buildEsbuild() {
  await esbuild({
    entryPoints: [path.join(apps, "page/main.js")],
    bundle: true,
    minify: true,
    format: "esm",
    outfile: path.join(appDir("esbuild"), "main.js"),
    logLevel: "warning",
  });
  finishPlainBundle("esbuild");
}

/**
 * The Node app bundled by esbuild for Node: the bundle holds the package's Node entry, which
 * reads the .wasm from beside the file it is in, now the bundle, so the documented step applies
 * here too.
 */
async function buildEsbuildNode() {
  const outdir = appDir("esbuild-node");
  rmSync(outdir, { recursive: true, force: true });
  await esbuild({
    entryPoints: [path.join(apps, "node/main.mjs")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: path.join(outdir, "main.mjs"),
    logLevel: "warning",
  });
  const wasm = fileURLToPath(import.meta.resolve("retry-budget/retry_budget_bg.wasm"));
  copyFileSync(wasm, path.join(outdir, "retry_budget_bg.wasm"));
}

async function buildRollup() {
  const bundle = await rollup({
    input: path.join(apps, "page/main.js"),
    plugins: [nodeResolve({ browser: true })],
  });
  await bundle.write({ file: path.join(appDir("rollup"), "main.js"), format: "es" });
  await bundle.close();
  finishPlainBundle("rollup");
}

/** The page beside the bundle, and the documented step: the package's .wasm copied next to it. */
function finishPlainBundle(name) {
  copyFileSync(path.join(apps, "page/index.html"), path.join(appDir(name), "index.html"));
  const wasm = fileURLToPath(import.meta.resolve("retry-budget/retry_budget_bg.wasm"));
  copyFileSync(wasm, path.join(appDir(name), "retry_budget_bg.wasm"));
}

/** No bundler: the page, its modules and the installed package's folder, served as they are. */
function copyPlain() {
  const name = "plain";
  rmSync(appDir(name), { recursive: true, force: true });
  cpSync(path.join(apps, name), appDir(name), { recursive: true });
  copyFileSync(path.join(apps, "page/index.html"), path.join(appDir(name), "index.html"));
  copyFileSync(path.join(apps, "shared.js"), path.join(appDir(name), "shared.js"));
  const installed = path.dirname(fileURLToPath(import.meta.resolve("retry-budget/package.json")));
  cpSync(installed, path.join(appDir(name), "retry-budget"), { recursive: true });
}

// ---- Running them. ----

/** Starts the fixture server on a free port, serving target/packages/ under /apps/. */
async function startFixtureServer() {
  const binary = path.join(root, "target/debug/fixture-server");
  const args = ["--host", "127.0.0.1", "--port", "0", "--root", root, "--mount", "/apps=target/packages"];
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "ignore"] });
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    new Promise((resolve) => lines.once("line", resolve)),
    new Promise((_, reject) => child.once("exit", () => reject(new Error(`${binary} exited`)))),
  ]);
  return { child, base: first.split(" ").at(-1).replace(/\/$/, "") };
}

/** The query naming the scenario and the run (and where the API is, for another origin). */
function query(run, api) {
  return new URLSearchParams({ scenario: SCENARIO, run, ...(api ? { api } : {}) });
}

/** Opens `url` in a new page and returns the JSON the app shows, or throws with the page's errors. */
async function inPage(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  // A 429 is the scenario, and the browser asks for a favicon no app has; any other failed
  // load (a .wasm not found) is a problem. The console's own line for each is left out.
  page.on("response", (response) => {
    const { pathname } = new URL(response.url());
    if (response.status() >= 400 && !["/palettes", "/favicon.ico"].includes(pathname)) {
      errors.push(`${response.status()} for ${response.url()}`);
    }
  });
  page.on("console", (message) => {
    const text = message.text();
    if (message.type() === "error" && !text.startsWith("Failed to load resource")) errors.push(text);
  });
  try {
    await page.goto(url);
    await page.waitForSelector("#result[data-done]", { state: "attached", timeout: TIMEOUT_MS });
    return { got: JSON.parse(await page.textContent("#result")), errors };
  } catch (error) {
    throw new Error(`${error.message.split("\n")[0]}; the page said: ${errors.join(" | ") || "nothing"}`);
  } finally {
    await page.close();
  }
}

/** Runs a Node script with the read's URL and returns the JSON it prints. */
async function inNode(script, url) {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, url], { timeout: TIMEOUT_MS });
    return { got: JSON.parse(stdout.trim().split("\n").at(-1)), errors: [] };
  } catch (error) {
    const thrown = error.stderr?.split("\n").find((line) => /^\w*Error\b/.test(line));
    throw new Error(`node ${path.relative(root, script)} failed: ${thrown ?? error.message}`);
  }
}

/** The server's log of one run: its GET requests. */
async function serverLog(ctx, run) {
  const entries = await (await fetch(`${ctx.base}/log?run=${encodeURIComponent(run)}`)).json();
  return entries.filter((entry) => entry.method === "GET");
}

/** What is wrong with one read: the app's result against `want`, and the server's log. */
function readProblems(got, log, want) {
  if (got.error) return [`rejected: ${got.error}`];
  const problems = [];
  for (const key of ["outcome", "attempts", "status", "body"]) {
    if (!isDeepStrictEqual(got[key], want[key])) {
      problems.push(`${key} ${JSON.stringify(got[key])}, not ${JSON.stringify(want[key])}`);
    }
  }
  const seen = log.map((entry) => `${entry.attempt}:${entry.status}`).join(" ");
  if (seen !== "1:429 2:200") problems.push(`the server saw ${seen || "nothing"}, not 1:429 2:200`);
  else if (log[1].arrival_ms - log[0].sent_ms < 1000) {
    problems.push("the retry reached the server less than 1 s after the 429 (Retry-After: 1)");
  }
  return problems;
}

/** A plain environment: one read, made by whatever `open(ctx, run)` opens (a page, a Node app). */
function plain(open) {
  return async (ctx, run) => {
    const { got, errors } = await open(ctx, run);
    const problems = readProblems(got, await serverLog(ctx, run), ctx.want);
    return [...problems, ...errors.map((e) => `the page logged an error: ${e}`)];
  };
}

const served = (name) => (ctx, run) => inPage(ctx.browser, `${ctx.base}/apps/${name}/index.html?${query(run)}`);
const viteDev = (name) => (ctx, run) => inPage(ctx.browser, `${ctx.dev()}${name}/index.html?${query(run, ctx.base)}`);

/** The Vite build of apps/page (made by the "Vite 8, build" row, which runs before this one)
 *  served by `vite preview`, on its own origin, for one read. */
async function viteBuildPreviewed(ctx, run) {
  const server = await vitePreview({
    configFile: false,
    root: path.join(apps, "page"),
    base: "./",
    cacheDir: viteCache,
    logLevel: "warn",
    build: { outDir: appDir("vite") },
    preview: { host: "127.0.0.1" },
  });
  try {
    return await inPage(ctx.browser, `${server.resolvedUrls.local[0]}index.html?${query(run, ctx.base)}`);
  } finally {
    await server.close();
  }
}
const node = (script) => (ctx, run) => inNode(script, `${ctx.base}/palettes?${new URLSearchParams({ collection: "coast", scenario: SCENARIO, run })}`);

/**
 * React under StrictMode in development: two effects, so two actions. The first is aborted by
 * its cleanup before it sends anything (its run is absent from the log) and rejects with an
 * AbortError; the second reads as any app does, and the component renders the list.
 */
async function reactStrictMode(ctx, run) {
  const { got, errors } = await viteDev("react")(ctx, run);
  if (got.error) return [`rejected: ${got.error}`];
  if (got.effects?.length !== 2) return [`${got.effects?.length} effects ran, not 2: StrictMode is not on`];
  const [first, second] = got.effects;
  const problems = [];
  if (first.name !== "AbortError") problems.push(`the first action settled with ${JSON.stringify(first)}`);
  if (![null, 0].includes(first.attempts)) problems.push(`the first action's report counts ${first.attempts} attempts`);
  const firstLog = await serverLog(ctx, `${run}-1`);
  if (firstLog.length) problems.push(`the first action sent ${firstLog.length} request(s)`);
  problems.push(...readProblems(second, await serverLog(ctx, `${run}-2`), ctx.want));
  if (!isDeepStrictEqual(got.rendered, ctx.want.body)) problems.push(`rendered ${JSON.stringify(got.rendered)}`);
  return [...problems, ...errors.map((e) => `the page logged an error: ${e}`)];
}

/** Every environment: its name, the step its users take, its build (if any), and its run. */
const ENVIRONMENTS = [
  { name: "no bundler, the package's folder served", step: "none", build: copyPlain, run: plain(served("plain")) },
  { name: "webpack 5, production build", step: "none", build: buildWebpack, run: plain(served("webpack")) },
  { name: "Vite 8, build", step: "none", build: () => buildVite("page", "vite"), run: plain(served("vite")) },
  { name: "Vite 8, preview of the build", step: "none", run: plain(viteBuildPreviewed) },
  { name: "Vite 8, dev server", step: "none", run: plain(viteDev("page")) },
  { name: "esbuild, bundle", step: COPY_WASM, build: buildEsbuild, run: plain(served("esbuild")) },
  { name: "Rollup 4 + node-resolve", step: COPY_WASM, build: buildRollup, run: plain(served("rollup")) },
  { name: "module Web Worker (Vite 8 build)", step: "none", build: () => buildVite("worker", "worker"), run: plain(served("worker")) },
  { name: "React 19, StrictMode (Vite 8 dev)", step: "none", run: reactStrictMode },
  { name: "Node 20 ESM, import and call", step: "none", run: plain(node(path.join(apps, "node/main.mjs"))) },
  { name: "Node 20 ESM, await init() first", step: "none", run: plain(node(path.join(apps, "node-init/main.mjs"))) },
  { name: "webpack 5, bundled for Node 20", step: "none", build: buildWebpackNode, run: plain(node(path.join(appDir("webpack-node"), "main.cjs"))) },
  { name: "esbuild, bundled for Node 20", step: COPY_WASM, build: buildEsbuildNode, run: plain(node(path.join(appDir("esbuild-node"), "main.mjs"))) },
];

/** Builds, then runs, every environment; returns each one's problems and time. */
async function runAll(ctx) {
  const results = [];
  for (const env of ENVIRONMENTS) {
    const started = performance.now();
    const run = `pkg-${process.pid}-${results.length + 1}`;
    let problems;
    try {
      if (env.build) await env.build();
      problems = await env.run(ctx, run);
    } catch (error) {
      problems = [String(error?.message ?? error).split("\n").slice(0, 3).join(" ")];
    }
    results.push({ env, problems, seconds: (performance.now() - started) / 1000 });
  }
  return results;
}

/** The table the run ends with, and its closing count. */
function printTable(results) {
  const rows = results.map(({ env, problems, seconds }) => [
    env.name, env.step, problems.length ? "FAILS" : "works", `${seconds.toFixed(1)} s`,
  ]);
  const all = [["environment", "step", "result", "time"], ...rows];
  const widths = all[0].map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`;
  console.log(["", line(all[0]), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n"));
  for (const { env, problems } of results) {
    for (const problem of problems) console.log(`${env.name}: ${problem}`);
  }
  const failed = results.filter((r) => r.problems.length).length;
  console.log(`\npackages: ${results.length - failed} passed, ${failed} failed`);
  return failed;
}

async function main() {
  mkdirSync(out, { recursive: true });
  const server = await startFixtureServer();
  let browser;
  try {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  } catch (error) {
    server.child.kill();
    throw error;
  }
  let dev = null;
  const ctx = {
    base: server.base,
    browser,
    want: expected(),
    dev: () => {
      if (!dev) throw new Error("the Vite dev server did not start");
      return dev.resolvedUrls.local[0];
    },
  };
  try {
    dev = await viteServer({
      configFile: false, root: apps, cacheDir: viteCache, logLevel: "warn",
      server: { host: "127.0.0.1" },
    });
    await dev.listen();
  } catch (error) {
    console.error(`the Vite dev server: ${error.message}`);
    dev = null;
  }
  try {
    return printTable(await runAll(ctx));
  } finally {
    await dev?.close();
    await browser.close();
    server.child.kill();
  }
}

process.exitCode = (await main()) ? 1 : 0;
