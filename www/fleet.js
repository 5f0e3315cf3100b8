// The Fleet screen: the fleet command's simulation (simulateFleet, full build) run in the page,
// in a worker (fleet-worker.js) so that the page keeps responding while it runs. Pages of
// widgets load at once (or over a span) against one rate-limited service; each policy meets
// its own fresh service with the same arrivals. The chart draws each policy's requests per
// second at the service over time; the table has the command's figures, each cell keeping the
// exact number in data-value.
import { SVG, addTo } from "./svg.js";
import { $, fixed, showLines, text } from "./view.js";

/** The inputs: element id, option name, and whether the option is a word. */
const INPUTS = [
  ["fleet-pages", "pages"],
  ["fleet-widgets", "widgets"],
  ["fleet-arrive", "arriveOver"],
  ["fleet-limiter", "limiter", true],
  ["fleet-rate", "rate"],
  ["fleet-burst", "burst"],
  ["fleet-limit", "limit"],
  ["fleet-window", "window"],
  ["fleet-retry-after", "retryAfter", true],
  ["fleet-seed", "seed"],
];

/** The page's defaults: the burst scenario at a tenth of its size (and of the limiter's). */
const SMALL = { pages: 1000, widgets: 3, arriveOver: 0, limiter: "bucket", rate: 50, burst: 100, limit: 100, window: 1, retryAfter: "seconds", seed: 1 };
/** The command's default burst scenario, which is also what an absent option takes (the
 *  network's and the service's options have no inputs here: latency 100 ms, tail 0.1, serve
 *  100,000 requests a second). */
const BURST = { ...SMALL, pages: 10000, rate: 500, burst: 1000, limit: 1000 };

/** The table's rows: label, the figure's path in a policy's result, and how it is written (as
 *  the fleet command writes its table: rounded half up from the figure's decimal value). */
const ROWS = [
  ["requests received", "requests", (v) => `${v}`],
  ["peak requests / s", "peak_per_s", (v) => `${v}`],
  ["answered 429", "share_429", (v) => `${fixed(v * 100, 1)}%`],
  ["actions with data", "with_data", (v, p) => `${v} / ${p.actions}`],
  ["time to data p50", "time_to_data_s.p50", (v) => (v === undefined ? "-" : `${fixed(v, 2)} s`)],
  ["time to data p95", "time_to_data_s.p95", (v) => (v === undefined ? "-" : `${fixed(v, 2)} s`)],
  ["time to data max", "time_to_data_s.max", (v) => (v === undefined ? "-" : `${fixed(v, 2)} s`)],
  ["longest wait for outcome", "longest_wait_for_outcome_s", (v) => `${fixed(v, 2)} s`],
  ["requests / action mean", "requests_per_action.mean", (v) => fixed(v, 2)],
  ["requests / action max", "requests_per_action.max", (v) => `${v}`],
  ["requests after outcome", "requests_after_outcome", (v) => `${v}`],
];

let last = null;
let runs = 0;
/** The worker that runs the simulation, made at the first run; one run at a time. */
let worker = null;
let running = false;

/** Runs simulateFleet(options) in the worker: `{ result, seconds }` or `{ error }`. A worker
 *  that failed is not used again: the next run starts a new one. */
function simulateInWorker(options) {
  worker ??= new Worker(new URL("./fleet-worker.js", import.meta.url), { type: "module" });
  return new Promise((resolve) => {
    worker.onmessage = ({ data }) => resolve(data);
    worker.onerror = (e) => {
      worker.terminate();
      worker = null;
      resolve({ error: `the simulation's worker failed: ${e.message ?? "it could not start"}` });
    };
    worker.postMessage(options);
  });
}

/** The options the inputs name; an empty number input is left to the default. */
function readInputs() {
  const options = {};
  for (const [id, name, word] of INPUTS) {
    const value = $(id).value.trim();
    if (value !== "") options[name] = word ? value : Number(value);
  }
  return options;
}

function fill(options) {
  for (const [id, name] of INPUTS) $(id).value = String(options[name]);
  showLimiterInputs();
}

/** Shows the bucket's inputs or the window's, as the limiter says. */
function showLimiterInputs() {
  const windowed = $("fleet-limiter").value === "window";
  for (const el of document.querySelectorAll("[data-limiter]")) el.hidden = (el.dataset.limiter === "window") !== windowed;
}

/** A figure by its path; `undefined` under a `null` (the times to data when none had data). */
const at = (object, path) => path.split(".").reduce((o, k) => o?.[k], object);

/** The table of figures: one column per policy, each cell's exact value in data-value. */
function showTable(result) {
  const head = document.createElement("tr");
  head.append(text("th", "figure"), ...result.policies.map((p, i) => {
    const th = text("th", p.policy, `series-key s${i}`);
    th.scope = "col";
    return th;
  }));
  const rows = ROWS.map(([label, path, write]) => {
    const tr = document.createElement("tr");
    const th = text("th", label);
    th.scope = "row";
    tr.append(th, ...result.policies.map((p) => {
      const td = text("td", write(at(p, path), p));
      Object.assign(td.dataset, { field: path, policy: p.policy, value: String(at(p, path) ?? null) });
      return td;
    }));
    return tr;
  });
  const table = document.createElement("table");
  table.className = "fleet-table";
  const thead = document.createElement("thead");
  thead.append(head);
  const tbody = document.createElement("tbody");
  tbody.append(...rows);
  table.append(text("caption", "Figures per policy (the same as fleet --json for these options)"), thead, tbody);
  $("fleet-table").replaceChildren(table);
}

/** Round steps for an axis that spans `span`, about `count` of them. */
function step(span, count) {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}

/** The y scale: log10 over decades from 1 req/s, or linear from 0. */
function yScale(top, log, y0, y1) {
  if (log) {
    const decades = Math.max(1, Math.ceil(Math.log10(Math.max(top, 10))));
    const y = (v) => y0 - (Math.log10(Math.max(v, 1)) / decades) * (y0 - y1);
    const ticks = Array.from({ length: decades + 1 }, (_, i) => 10 ** i);
    return { y, ticks };
  }
  const s = step(top || 1, 5);
  const max = Math.ceil((top || 1) / s) * s;
  const y = (v) => y0 - (v / max) * (y0 - y1);
  const ticks = Array.from({ length: Math.round(max / s) + 1 }, (_, i) => i * s);
  return { y, ticks };
}

/** A tick label: 12000 as 12k. */
function short(v) {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return `${v}`;
}

/** The service's capacity in requests per second, for the reference line. */
function capacity(options) {
  return options.limiter === "window" ? options.limit / options.window : options.rate;
}

/** Draws each policy's requests per second over time, a step line per policy. */
function drawChart(result, options) {
  const box = $("fleet-chart");
  const W = Math.max(300, Math.round(box.clientWidth || 720));
  const H = W < 520 ? 260 : 320;
  const m = { left: W < 520 ? 44 : 60, right: 10, top: 12, bottom: 44 };
  const log = $("fleet-log").checked;
  const bins = result.policies[0]?.requests_per_s.length ?? 0;
  const span = Math.max(bins, 1) * result.bin_s;
  const top = Math.max(capacity(options), ...result.policies.flatMap((p) => p.requests_per_s));
  const x = (t) => m.left + (t / span) * (W - m.left - m.right);
  const { y, ticks } = yScale(top, log, H - m.bottom, m.top);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const add = (tag, attrs, content) => addTo(svg, tag, attrs, content);
  for (const v of ticks) {
    add("line", { x1: m.left, x2: W - m.right, y1: y(v), y2: y(v), class: "fleet-grid" });
    add("text", { x: m.left - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, short(v));
  }
  const tstep = step(span, W < 520 ? 4 : 8);
  for (let t = 0; t <= span + 1e-9; t += tstep) {
    add("text", { x: x(t), y: H - m.bottom + 16, class: "tick", "text-anchor": "middle" }, `${+t.toFixed(3)}`);
  }
  add("text", { x: (m.left + W - m.right) / 2, y: H - 6, class: "axis-label", "text-anchor": "middle" }, "seconds from the first arrival");
  add("text", { x: 12, y: (H - m.bottom + m.top) / 2, class: "axis-label", "text-anchor": "middle", transform: `rotate(-90 12 ${(H - m.bottom + m.top) / 2})` },
    log ? "requests / s at the service (log)" : "requests / s at the service");
  add("line", { x1: m.left, x2: W - m.right, y1: y(capacity(options)), y2: y(capacity(options)), class: "fleet-capacity" });
  result.policies.forEach((p, i) => {
    const points = p.requests_per_s.flatMap((v, k) => [`${x(k * result.bin_s)},${y(v)}`, `${x((k + 1) * result.bin_s)},${y(v)}`]);
    const line = add("polyline", { points: points.join(" "), class: `fleet-line s${i}` });
    Object.assign(line.dataset, { policy: p.policy, values: p.requests_per_s.join(",") });
  });
  add("line", { x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom, class: "fleet-axis" });
  add("line", { x1: m.left, x2: W - m.right, y1: H - m.bottom, y2: H - m.bottom, class: "fleet-axis" });
  box.replaceChildren(svg);
  showLegend(result, options);
}

/** The legend: each policy's colour and dash, and the limiter's capacity. */
function showLegend(result, options) {
  const items = result.policies.map((p, i) => {
    const li = text("li", p.policy);
    li.prepend(text("span", "", `swatch s${i}`));
    return li;
  });
  const cap = text("li", `the limiter's capacity, ${capacity(options)} requests / s`);
  cap.prepend(text("span", "", "swatch capacity"));
  $("fleet-legend").replaceChildren(...items, cap);
}

function status(lines, failed) {
  const box = $("fleet-status");
  box.classList.toggle("fleet-error", !!failed);
  showLines(box, lines);
}

/** Runs the simulation on the inputs, in the worker, and shows it. */
async function run() {
  if (running) return;
  running = true;
  const options = readInputs();
  const screen = $("screen-fleet");
  screen.dataset.state = "running";
  $("fleet-run").disabled = true;
  status(["Running every policy in this browser, beside the page..."]);
  try {
    const { result, seconds, error } = await simulateInWorker(options);
    if (error !== undefined) throw new Error(error);
    last = { result, options: { ...BURST, ...options } };
    drawChart(last.result, last.options);
    showTable(result);
    const actions = result.policies[0]?.actions ?? 0;
    status([`${result.policies.length} policies, ${actions} actions each, simulated in ${seconds.toFixed(2)} s in this browser (seed ${last.options.seed}).`]);
    screen.dataset.state = "done";
  } catch (e) {
    status([e.message], true);
    screen.dataset.state = "error";
  } finally {
    screen.dataset.runs = String(++runs);
    $("fleet-run").disabled = false;
    running = false;
  }
}

/** Builds the screen's controls; call once, after the module's init(). */
export function mountFleet() {
  fill(SMALL);
  $("fleet-limiter").addEventListener("change", showLimiterInputs);
  $("fleet-run").addEventListener("click", run);
  $("fleet-burst-defaults").addEventListener("click", () => fill(BURST));
  $("fleet-small-defaults").addEventListener("click", () => fill(SMALL));
  $("fleet-log").addEventListener("change", () => last && drawChart(last.result, last.options));
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => last && !$("screen-fleet").hidden && drawChart(last.result, last.options), 150);
  });
}

/** The Fleet screen is shown: the first time, run the defaults; later, redraw at this width. */
export function showFleet() {
  if (!last && !$("screen-fleet").dataset.runs) run();
  else if (last) drawChart(last.result, last.options);
}
