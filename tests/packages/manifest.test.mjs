// The npm package as npm would publish it (`npm pack --dry-run --json` of crate/pkg/, made by
// scripts/package): its listing holds every file its manifest points to and nothing else, and
// its manifest says what the project's own files say (crate/Cargo.toml, the app build's
// declarations, the root README and license texts); every relative link in its README names a
// file it ships. TypeScript finds the declarations through the exports map. Needs both builds
// (crate/pkg/ and crate/pkg-full/; scripts/test builds them) and tsc on PATH (scripts/env.sh):
//   node --test tests/packages/manifest.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const read = (file) => readFileSync(path.join(root, file), "utf8");
const pkg = path.join(root, "crate/pkg");

const [packed] = JSON.parse(
  execFileSync("npm", ["pack", "--dry-run", "--json", "--loglevel=error", pkg], { encoding: "utf8" }),
);
const listed = new Map(packed.files.map((file) => [file.path, file.size]));
const manifest = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8"));

/** `key = "value"` from a Cargo.toml's text. */
function cargoField(text, key) {
  const match = text.match(new RegExp(`^${key} = "([^"]*)"`, "m"));
  assert.ok(match, `${key} is set`);
  return match[1];
}

/** The functions a build's declarations export. */
function exportedFunctions(dir) {
  const declarations = read(`crate/${dir}/retry_budget.d.ts`);
  return [...declarations.matchAll(/^export function (\w+)/gm)].map((match) => match[1]);
}

/** Every file path an `exports` value points to (strings, nested conditions). */
function targets(value) {
  return typeof value === "string" ? [value] : Object.values(value).flatMap(targets);
}

test("the listing is exactly the files the package promises, and they are complete", () => {
  const promised = [
    "package.json", "README.md", "LICENSE-MIT", "LICENSE-APACHE", "node.js",
    "retry_budget.js", "retry_budget.d.ts", "retry_budget_bg.wasm",
  ];
  assert.deepEqual([...listed.keys()].sort(), promised.sort());
  const pointed = [
    manifest.main, manifest.types, ...manifest.files, ...manifest.sideEffects,
    ...targets(manifest.exports),
  ];
  for (const file of pointed) {
    assert.ok(listed.has(file.replace(/^\.\//, "")), `${file} is in the package`);
  }
  for (const file of ["LICENSE-MIT", "LICENSE-APACHE"]) {
    assert.equal(listed.get(file), statSync(path.join(root, file)).size, `${file} is the root's`);
  }
  assert.equal(listed.get("node.js"), statSync(path.join(root, "crate/npm/node.js")).size);
});

/** Every link target of a Markdown text, outside fenced code: inline links and images,
 *  reference definitions, and HTML `href` and `src` attributes. */
function linkTargets(markdown) {
  const prose = markdown.split(/^```.*$/m).filter((_, i) => i % 2 === 0).join("\n");
  const patterns = [
    /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm,
    /\b(?:href|src)\s*=\s*["']([^"']+)["']/g,
  ];
  return patterns.flatMap((pattern) => [...prose.matchAll(pattern)].map((match) => match[1]));
}

test("every relative link in the README names a file the package ships", () => {
  // npm shows the README without the repository around it: a link to docs/... is dead there.
  const readme = readFileSync(path.join(pkg, "README.md"), "utf8");
    const sample =
    '[a](docs/x.md "t") ![i](<p.png>)\n[c]: z.md\n```\n[d](code.md)\n```\n<a href="h.md">';
  assert.deepEqual(linkTargets(sample), ["docs/x.md", "p.png", "z.md", "h.md"], "the link reader");
  const dead = linkTargets(readme)
    .filter((target) => !/^([a-z][a-z0-9+.-]*:|#|\/\/)/i.test(target))
    .filter((target) => {
      const file = path.posix.normalize(decodeURI(target.split(/[?#]/)[0]));
      return file.startsWith("../") || !listed.has(file.replace(/^\.\//, ""));
    });
  assert.deepEqual(dead, [], "links to files the package does not ship");
  // Still the root README, links aside: every heading and the example are there.
  const rootReadme = read("README.md");
  for (const heading of rootReadme.match(/^#+ .*$/gm)) {
    assert.ok(readme.includes(heading), `the packaged README has ${heading}`);
  }
  assert.ok(readme.includes("await fetchWithBudget("), "the example is there");
});

test("name, version, license, repository and keywords are crate/Cargo.toml's", () => {
  const crate = read("crate/Cargo.toml");
  assert.equal(manifest.name, cargoField(crate, "name"));
  assert.equal(manifest.version, cargoField(crate, "version"));
  assert.equal(manifest.license, cargoField(read("Cargo.toml"), "license"));
  assert.equal(manifest.license, "MIT OR Apache-2.0");
  assert.equal(manifest.repository.url, cargoField(crate, "repository"));
  assert.ok(manifest.keywords.length > 0);
  assert.equal(manifest.type, "module");
  assert.ok(manifest.engines.node, "engines.node is set");
});

test("the description names only what the app build exports", () => {
  const app = exportedFunctions("pkg");
  const full = exportedFunctions("pkg-full");
  assert.ok(app.includes("fetchWithBudget"));
  const fullOnly = full.filter((name) => !app.includes(name));
  assert.ok(fullOnly.includes("simulate"), "the full build's own exports are known");
  const words = new Set(manifest.description.split(/\W+/));
  for (const name of fullOnly) assert.ok(!words.has(name), `the description promises ${name}`);
  assert.ok(words.has("fetchWithBudget"));
});

test("the exports map: types first, the browser entry for bundlers, node.js for Node, the .wasm", () => {
  const main = manifest.exports["."];
  assert.deepEqual(Object.keys(main), ["types", "browser", "node", "default"]);
  assert.equal(main.types, "./retry_budget.d.ts");
  assert.equal(main.browser, "./retry_budget.js");
  assert.equal(main.default, "./retry_budget.js");
  assert.equal(main.node, "./node.js");
  assert.equal(manifest.exports["./retry_budget_bg.wasm"], "./retry_budget_bg.wasm");
  // Only node.js starts anything when imported: a bundler may drop the rest when unused.
  assert.deepEqual(manifest.sideEffects, ["./node.js"]);
});

test("TypeScript resolves the declarations through the exports map", () => {
  const project = path.join(root, "tests/packages/apps/typescript");
  for (const [module, resolution] of [["esnext", "bundler"], ["node16", "node16"]]) {
    execFileSync("tsc", ["-p", project, "--module", module, "--moduleResolution", resolution], {
      stdio: "inherit",
    });
  }
});
