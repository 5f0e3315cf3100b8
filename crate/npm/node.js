// The package's entry under Node (the "node" condition of its exports map). The browser entry,
// retry_budget.js, fetches the .wasm beside it from `new URL(..., import.meta.url)`, and Node's
// fetch cannot read a file: URL. This entry reads the same file from disk and starts the module
// as it is imported, so `import { fetchWithBudget } from "retry-budget"` is all Node code needs.
import { readFileSync } from "node:fs";
import { initSync } from "./retry_budget.js";

const wasm = initSync({
  module: readFileSync(new URL("./retry_budget_bg.wasm", import.meta.url)),
});

/**
 * Resolves at once with the started module's exports: the module started when this entry was
 * imported, so any argument is ignored. Code written for browsers, `await init()`, runs
 * unchanged.
 */
export default function init() {
  return Promise.resolve(wasm);
}

export * from "./retry_budget.js";
