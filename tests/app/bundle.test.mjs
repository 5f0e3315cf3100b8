// The app build through a bundler: esbuild (what Vite uses) bundles and minifies a stand-in
// app that imports crate/pkg/, and the bundle runs in Node. esbuild comes from npm
// (scripts/setup); scripts/test puts it on PATH and runs this file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here("../../target/app-bundle/app.min.mjs");

test("a bundled, minified app loads a list through a 429", async () => {
  mkdirSync(here("../../target/app-bundle"), { recursive: true });
  execFileSync("esbuild", [
    here("app.mjs"), "--bundle", "--minify", "--format=esm", "--platform=neutral",
    `--outfile=${out}`, "--log-level=warning",
  ]);
  const { load } = await import(out);
  const answers = [
    new Response("", { status: 429, headers: { "Retry-After": "1" } }),
    new Response('["sea glass"]', { status: 200 }),
  ];
  const fetch = () => Promise.resolve(answers.shift());
  const wasm = readFileSync(here("../../crate/pkg/retry_budget_bg.wasm"));
  const { report, running } = await load(wasm, fetch);
  assert.equal(report.outcome, "success");
  assert.equal(report.attempts, 2);
  assert.deepEqual(report.body, ["sea glass"]);
  assert.equal(running, 0);
});
