// A React component that loads the list in an effect and aborts the action in the effect's
// cleanup, rendered under StrictMode in development: React runs the effect, its cleanup and the
// effect again, so the first action is aborted before it sends anything and the second loads the
// list. Each effect reads with a run of its own, so the server's log tells the two apart.
// Plain createElement: no JSX transform, so the app needs no plugin.
import { StrictMode, createElement as h, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import init, { fetchWithBudget } from "retry-budget";
import { failure, palettesUrl, show, summary } from "../shared.js";

const query = new URLSearchParams(location.search);
const settled = [];

function Palettes() {
  const [list, setList] = useState(null);
  useEffect(() => {
    const leave = new AbortController();
    const run = `${query.get("run")}-${settled.length + 1}`;
    const action = fetchWithBudget(palettesUrl({ ...Object.fromEntries(query), run }), {
      signal: leave.signal,
    });
    settled.push(action.then(summary, failure));
    action.then(
      (result) => setList(result.body),
      () => leave.signal.aborted || finish(),
    );
    return () => leave.abort();
  }, []);
  useEffect(() => {
    if (list) finish();
  }, [list]);
  return h("ul", null, list?.map((name) => h("li", { key: name }, name)));
}

/** Shows what every effect's action settled with, and the list as rendered. */
function finish() {
  const rendered = [...document.querySelectorAll("li")].map((li) => li.textContent);
  Promise.all(settled).then((effects) => show({ effects, rendered }));
}

await init();
createRoot(document.querySelector("#root")).render(h(StrictMode, null, h(Palettes)));
