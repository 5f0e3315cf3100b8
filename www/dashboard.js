// The Dashboard screen: four widgets load at once from one service, with `share: "tabs"`. Three
// load palettes under the origin's limit (the default scope), so a Retry-After that one of them
// receives holds back the others (and those of other tabs of this page). The fourth, a search
// widget, is limited apart: it names its own scope, so its waits never hold back the palettes.
// Everything taken from a response is inserted as text.
import { defaultPolicy, fetchWithBudget, rateLimits } from "./pkg-full/retry_budget.js";
import { SVG, addTo } from "./svg.js";
import { spans } from "./timeline.js";
import { $, lastReceipt, lastResponse, listItems, runId as newRunId, seconds, showLines, text } from "./view.js";

/** The widgets, each played by one of the fixture server's dashboard scenarios. The palettes
 *  share the origin's limit; the search widget reads the RateLimit field of its own limit. */
const WIDGETS = [
  { collection: "coast", scenario: "dashboard-coast", title: "Coast palettes" },
  { collection: "forest", scenario: "dashboard-forest", title: "Forest palettes" },
  { collection: "desert", scenario: "dashboard-desert", title: "Desert palettes" },
  {
    collection: "search",
    // The service has no search collection (a request naming one gets a 404): the search
    // widget asks for the coast palettes, under a limit of its own.
    asks: "coast",
    scenario: "dashboard-search",
    title: "Search (its own rate limit)",
    scope: "search",
    policy: { ratelimit_fields: true },
  },
];
/** How often the Rate limits panel reads `rateLimits()`, in milliseconds. */
const LIMITS_EVERY_MS = 250;

/** Each widget: its spec, its elements and the action that owns it now (or null). */
const widgets = [];
let limitsTimer = null;

/** A definition list row: a term and its (text) value element. */
function row(list, term) {
  const value = text("dd", "-");
  list.append(text("dt", term), value);
  return value;
}

/** Builds one widget's panel. */
function build(spec) {
  const root = document.createElement("section");
  root.className = "panel widget";
  root.dataset.collection = spec.collection;
  root.dataset.scope = spec.scope ?? "origin";
  root.setAttribute("aria-labelledby", `widget-${spec.collection}-title`);
  const title = text("h3", spec.title);
  title.id = `widget-${spec.collection}-title`;
  const state = document.createElement("div");
  state.className = "widget-state";
  state.setAttribute("role", "status");
  state.setAttribute("aria-live", "polite");
  state.append(text("p", "Not started."));
  const last = document.createElement("dl");
  const fields = {
    status: row(last, "Last status"),
    raw: row(last, "Retry-After (raw)"),
    reading: row(last, "Read as"),
    ratelimit: row(last, "RateLimit field"),
  };
  const timeline = document.createElement("div");
  timeline.className = "widget-timeline";
  timeline.setAttribute("role", "img");
  timeline.setAttribute("aria-label", `Timeline of the ${spec.title} widget: requests, waits and the blocks it heard`);
  const list = document.createElement("ul");
  root.append(title, state, last, timeline, list);
  return { spec, root, state, fields, timeline, list, action: null };
}

/** Shows the widget's last response (the last receipt among its events, and how the model used
 *  it), or none. */
function showLast(widget, events) {
  const { receipt, next } = lastReceipt(events);
  const shown = lastResponse(receipt, next);
  for (const [key, el] of Object.entries(widget.fields)) el.textContent = shown[key];
}

/** The module's default policy, asked once. */
let defaults = null;
const policyDefaults = () => (defaults ??= defaultPolicy());
/** The policy a widget's actions run under: the module fills each field its spec leaves out
 *  with the default. */
const policyOf = (widget) => ({ ...policyDefaults(), ...widget.spec.policy });

/** Draws a widget's timeline over the budget: the blocks it heard behind, requests and waits on
 *  top. */
function draw(widget, s) {
  const W = 360, H = 58, left = 8, right = 12, span = policyOf(widget).budget_s;
  const x = (t) => left + (Math.max(0, Math.min(t, span)) / span) * (W - left - right);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const add = (tag, attrs, content) => addTo(svg, tag, attrs, content);
  const bar = ([a, b], y, h, cls) => add("rect", { x: x(a), y, width: Math.max(1, x(b) - x(a)), height: h, class: cls });
  for (const b of s.blocks) bar(b, 2, 34, "block");
  for (const w of s.waits) bar(w, 15, 8, "wait");
  for (const r of s.requests) bar(r, 10, 18, "request");
  if (s.stop !== null) add("line", { x1: x(s.stop), x2: x(s.stop), y1: 0, y2: 38, class: "stop" });
  for (let t = 0; t <= span; t += 5) add("text", { x: x(t), y: 52, class: "tick", "text-anchor": "middle" }, `${t}`);
  widget.timeline.replaceChildren(svg);
}

/** Shows the list a widget loaded. */
function showList(widget, body) {
  widget.list.replaceChildren(...listItems(body).map((item) => text("li", item)));
}

/** Starts a widget's action; `pressedAt` (a `performance.now()`) is the dashboard clock's zero. */
async function run(widget, pressedAt) {
  const controller = new AbortController();
  const me = { controller, events: [] };
  widget.action = me;
  const owns = () => widget.action === me;
  const runId = newRunId();
  const offset = (performance.now() - pressedAt) / 1000;
  const cap_s = policyOf(widget).attempt_cap_s;
  const drawn = (now) => spans(me.events, { cap_s, now, offset });
  const redraw = () => owns() && draw(widget, drawn((performance.now() - pressedAt) / 1000));
  const ticker = setInterval(redraw, 100);
  Object.assign(widget.root.dataset, { run: runId, outcome: "" });
  showLast(widget, []);
  showList(widget, []);
  const { collection, asks = collection, scenario, scope, policy } = widget.spec;
  const url = `/palettes?collection=${asks}&scenario=${scenario}&run=${encodeURIComponent(runId)}`;
  try {
    const result = await fetchWithBudget(url, {
      policy,
      scope,
      signal: controller.signal,
      screen: `dashboard-${collection}`,
      share: "tabs",
      onUpdate(update) {
        if (!owns()) return;
        me.events.push(...update.events);
        showLines(widget.state, update.visible);
        showLast(widget, me.events);
        redraw();
      },
    });
    if (!owns()) return;
    showLines(widget.state, result.visible);
    widget.root.dataset.outcome = result.outcome;
    if (result.outcome === "success") showList(widget, result.body);
  } catch (e) {
    if (!owns()) return;
    if (e.name === "AbortError" && e.report) {
      // The module ended it (the dashboard was left, or the page hidden): the widget says so,
      // in the model's words.
      showLines(widget.state, e.report.visible);
      widget.root.dataset.outcome = e.report.outcome;
    } else {
      showLines(widget.state, [`Could not start: ${e.message}`]);
    }
  } finally {
    clearInterval(ticker);
    if (owns()) {
      draw(widget, drawn());
      widget.action = null;
    }
  }
}

/** One press: a new action for every widget, at the same moment. From a static server there is
 *  nothing to ask: each widget says what a live run needs instead. */
function load() {
  if (document.body.dataset.served === "false") {
    for (const widget of widgets) {
      showLines(widget.state, ["No live run: the dashboard's widgets need the fixture server (scripts/run) to play their scenarios."]);
    }
    return;
  }
  const pressedAt = performance.now();
  for (const widget of widgets) run(widget, pressedAt);
}

/** When a limit ends, on the local clock: a time today, a date and time later, or none for a
 *  wait past any date a clock can write (a saturated Retry-After). */
function untilText(until_s) {
  const when = new Date(Date.now() + until_s * 1000);
  if (Number.isNaN(when.getTime())) return "longer than any date can say";
  return `until ${until_s < 12 * 3600 ? when.toLocaleTimeString() : when.toLocaleString()}`;
}

/** What the panel last told a screen reader. */
let limitsSaid = "";

/** The Rate limits panel, from `rateLimits()` now: each limit (scope) in force, with the seconds
 *  left. A screen reader is told only when the set of limits changes, not at every tick. */
function showLimits() {
  const limits = rateLimits();
  const lines = limits.map(({ scope, until_s }) =>
    `${scope}: the service asked us to wait ${untilText(until_s)} (${seconds(until_s)} s from now).`);
  if (!lines.length) lines.push("No rate limit in force: every limit may be asked now.");
  showLines($("rate-limits"), lines);
  const said = limits.length
    ? `Rate limits in force: ${limits.map(({ scope }) => scope).join(", ")}.`
    : "No rate limit in force.";
  if (said !== limitsSaid) $("rate-limits-said").textContent = limitsSaid = said;
}

/** Builds the widgets and wires the Load button; call once, after the module's init(). */
export function mountDashboard() {
  widgets.push(...WIDGETS.map(build));
  $("widgets").replaceChildren(...widgets.map((w) => w.root));
  for (const widget of widgets) draw(widget, spans([], { cap_s: 0 }));
  $("dash-load").addEventListener("click", load);
}

/** The dashboard is shown: read the rate limits live. */
export function showDashboard() {
  showLimits();
  if (limitsTimer === null) limitsTimer = setInterval(showLimits, LIMITS_EVERY_MS);
}

/** The dashboard is left: every widget's action ends, and the panel stops reading. Each widget
 *  that was running then says what its action's report says (the rejection in `run`). */
export function leaveDashboard() {
  clearInterval(limitsTimer);
  limitsTimer = null;
  for (const widget of widgets) widget.action?.controller.abort();
}
