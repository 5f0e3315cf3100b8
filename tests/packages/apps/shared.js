// What the apps share: the request each one makes (the runner names the scenario and the run,
// and for a dev server on another origin the fixture server's origin, in the page's query) and
// how a result goes back to the runner (JSON in the page's <output>, or on stdout in Node).

/** The URL of the one read, from `query` (a page's `location.search`, or a plain object). */
export function palettesUrl(query) {
  const params = new URLSearchParams(query);
  const api = params.get("api") ?? "";
  const read = new URLSearchParams({
    collection: "coast",
    scenario: params.get("scenario"),
    run: params.get("run"),
  });
  return `${api}/palettes?${read}`;
}

/** The parts of a result the runner checks. */
export function summary(result) {
  return {
    outcome: result.outcome,
    attempts: result.attempts,
    status: result.last_response?.status ?? null,
    body: result.body,
  };
}

/** What a rejection says: its name and message, and the attempts its report counts, if any. */
export function failure(error) {
  return {
    error: `${error?.name}: ${error?.message}`,
    name: error?.name,
    attempts: error?.report?.attempts ?? null,
  };
}

/** Hands `value` to the runner: the page's <output>, marked done. */
export function show(value) {
  const output = document.querySelector("#result");
  output.textContent = JSON.stringify(value);
  output.dataset.done = "true";
}

/** Shows the summary of what `action` resolves with, or its failure. */
export async function report(action) {
  try {
    show(summary(await action()));
  } catch (error) {
    show(failure(error));
  }
}
