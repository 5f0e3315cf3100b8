// How a benchmark page hands its result to scripts/bench: `window.benchDone`, a promise the
// driver waits on (one WebDriver call that does not poll: polling the page while it runs
// delays Firefox's timers by tens of milliseconds), and `window.benchResult`.

/**
 * Runs `measure` and reports what it resolves to, or `{ error }` if it throws: as
 * `window.benchResult`, through `window.benchDone` (set before `measure` starts), and as the
 * text of `#state`, which `summary(result)` gives (the whole result as JSON by default).
 */
export async function report(measure, summary = JSON.stringify) {
  let finish;
  window.benchDone = new Promise((resolve) => {
    finish = resolve;
  });
  let result;
  try {
    result = await measure();
  } catch (e) {
    result = { error: String(e?.message ?? e) };
  }
  window.benchResult = result;
  finish(result);
  document.getElementById("state").textContent = summary(result);
}
