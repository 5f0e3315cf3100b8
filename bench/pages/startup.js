// Start-up cost of the module, one measurement per page load (scripts/bench loads this page
// many times). Every response of the fixture server is `Cache-Control: no-store`, so each load
// downloads and compiles the module afresh.
//
// ?pkg=pkg      : which build to load, by its path on the fixture server: pkg (the app build, the
//                 default) or pkg-full (the full build, with simulate).
// ?mode=init  : `await init()`, which is what a page pays: fetch + compile + instantiate (the
//               glue streams the response into WebAssembly.instantiateStreaming).
// ?mode=split : the same three steps one by one: fetch the bytes, WebAssembly.compile, then
//               instantiate with the glue's own imports (initSync with the compiled module).
// The glue is imported inside the measurement, so that a broken package is reported, not hung.

// scripts/bench waits on this promise (one WebDriver call that does not poll: polling the page
// while it runs delays Firefox's timers by tens of milliseconds).
let finish;
window.benchDone = new Promise((resolve) => {
  finish = resolve;
});

const params = new URLSearchParams(location.search);
const mode = params.get("mode") ?? "init";
const pkg = params.get("pkg") ?? "pkg";

async function measure() {
  if (!/^pkg(-[a-z]+)?$/.test(pkg)) throw new Error(`not a package directory: ${pkg}`);
  const { default: init, initSync } = await import(`/${pkg}/retry_budget.js`);
  if (mode === "init") {
    const t0 = performance.now();
    const exports = await init();
    const t1 = performance.now();
    return {
      init_ms: t1 - t0,
      // From the navigation's start: the HTML, the glue and the module, ready to call.
      ready_ms: t1,
      wasm_memory_bytes: exports.memory.buffer.byteLength,
    };
  }
  const t0 = performance.now();
  const bytes = await (await fetch(`/${pkg}/retry_budget_bg.wasm`)).arrayBuffer();
  const t1 = performance.now();
  const module = await WebAssembly.compile(bytes);
  const t2 = performance.now();
  initSync({ module });
  const t3 = performance.now();
  return {
    fetch_ms: t1 - t0,
    compile_ms: t2 - t1,
    instantiate_ms: t3 - t2,
    compile_instantiate_ms: t3 - t1,
    wasm_bytes: bytes.byteLength,
  };
}

let result;
try {
  result = { mode, pkg, ...(await measure()) };
} catch (e) {
  result = { mode, pkg, error: String(e?.message ?? e) };
}
window.benchResult = result;
finish(result);
document.getElementById("state").textContent = JSON.stringify(result);
