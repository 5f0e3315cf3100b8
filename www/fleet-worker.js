// The Fleet screen's worker: runs the full build's simulateFleet off the page's main thread,
// so that the page keeps responding (and painting) through a run of any size, up to a million
// widgets. One message in, the options; one message out, the report or the error's message.
import init, { simulateFleet } from "./pkg-full/retry_budget.js";

const ready = init();

self.onmessage = async ({ data: options }) => {
  try {
    await ready;
    const started = performance.now();
    const result = simulateFleet(options);
    self.postMessage({ result, seconds: (performance.now() - started) / 1000 });
  } catch (e) {
    self.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
};
