// A stand-in for a JS app that ships the app build through a bundler: it imports the package
// as an app would, and is bundled and minified by esbuild in bundle.test.mjs.
import { initSync, fetchWithBudget, runningActions } from "../../crate/pkg/retry_budget.js";

/** Starts the module from the wasm's bytes, then loads one list with the given fetch. */
export async function load(wasmBytes, fetch) {
  initSync({ module: wasmBytes });
  const report = await fetchWithBudget("https://api.example/palettes?collection=coast", {
    fetch,
    share: "none",
  });
  return { report, running: runningActions() };
}
