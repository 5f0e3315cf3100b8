// The Dashboard screen: three widgets load three collections from the same origin at once, with
// `share: "tabs"`, so a Retry-After that one of them receives holds back the others (and those
// of other tabs of this page). Everything taken from a response is inserted as text.
import { fetchWithBudget, rateLimits } from "/pkg-full/retry_budget.js";
import { SVG, addTo } from "./svg.js";

const $ = (id) => document.getElementById(id);

/** The widgets: one collection each, played by the fixture server's dashboard scenarios. */
const WIDGETS = [
  { collection: "coast", scenario: "dashboard-coast", title: "Coast" },
  { collection: "forest", scenario: "dashboard-forest", title: "Forest" },
  { collection: "desert", scenario: "dashboard-desert", title: "Desert" },
];
const POLICY = { budget_s: 20, max_attempts: 3, attempt_cap_s: 4 };
/** How often the Rate limits panel reads `rateLimits()`, in milliseconds. */
const LIMITS_EVERY_MS = 250;

/** Each widget: its spec, its elements and the action that owns it now (or null). */
const widgets = [];
let limitsTimer = null;

function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

function seconds(x) {
  return Number.isInteger(x) ? `${x}` : x.toFixed(1);
}

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
  root.setAttribute("aria-labelledby", `widget-${spec.collection}-title`);
  const title = text("h3", `${spec.title} collection`);
  title.id = `widget-${spec.collection}-title`;
  const state = document.createElement("div");
  state.className = "widget-state";
  state.setAttribute("role", "status");
  state.setAttribute("aria-live", "polite");
  state.append(text("p", "Not started."));
  const last = document.createElement("dl");
  const fields = { status: row(last, "Last status"), raw: row(last, "Retry-After (raw)"), kind: row(last, "Read as") };
  const timeline = document.createElement("div");
  timeline.className = "widget-timeline";
  timeline.setAttribute("role", "img");
  timeline.setAttribute("aria-label", `Timeline of the ${spec.title} widget: requests, waits and the origin's block`);
  const list = document.createElement("ul");
  root.append(title, state, last, timeline, list);
  return { spec, root, state, fields, timeline, list, action: null };
}

/** Shows the widget's visible lines. */
function showState(widget, lines) {
  widget.state.replaceChildren(...lines.map((line) => text("p", line)));
}

/** Shows the widget's last response (a receipt event), or none. */
function showLast(widget, receipt) {
  const { status, raw, kind } = widget.fields;
  if (!receipt) {
    status.textContent = "none yet";
    raw.textContent = kind.textContent = "-";
    return;
  }
  const ra = receipt.retry_after;
  status.textContent = String(receipt.status);
  raw.textContent = ra.raw === null ? "(absent)" : JSON.stringify(ra.raw);
  const reading = ra.delay_s === null ? ra.kind : `${ra.kind}, ${seconds(ra.delay_s)} s`;
  const ok = receipt.status >= 200 && receipt.status < 300;
  kind.textContent = ok ? `${reading} (not needed: the request succeeded)` : reading;
}

/** Intervals of one trace on the dashboard clock: requests, waits, the origin's blocks, the stop. */
function spans(events, offset, now) {
  const out = { requests: [], waits: [], blocks: [], stop: null };
  let open = null;
  let wait = null;
  const at = (t) => t + offset;
  for (const e of events) {
    if (e.event === "start") {
      if (wait) out.waits.push([at(wait.at_s), at(e.at_s)]), (wait = null);
      open = e;
    } else if (e.event === "receipt" || e.event === "failure") {
      if (open) out.requests.push([at(open.at_s), at(e.at_s)]), (open = null);
      if (e.retry_after?.delay_s != null && (e.retry_after.kind === "seconds" || e.retry_after.kind === "date")) {
        out.blocks.push([at(e.at_s), at(e.at_s + e.retry_after.delay_s)]);
      }
    } else if (e.event === "blocked") {
      out.blocks.push([at(e.at_s), at(e.until_s)]);
    } else if (e.event === "wait") {
      wait = e;
    } else if (e.event === "stop" || e.event === "left") {
      if (open) out.requests.push([at(open.at_s), at(e.at_s)]), (open = null);
      if (wait) out.waits.push([at(wait.at_s), at(e.at_s)]), (wait = null);
      if (e.event === "stop") out.stop = at(e.at_s);
    }
  }
  if (open && now !== undefined) out.requests.push([at(open.at_s), now]);
  if (wait && now !== undefined) out.waits.push([at(wait.at_s), now]);
  return out;
}

/** Draws a widget's timeline over the budget: the block behind, requests and waits on top. */
function draw(widget, s) {
  const W = 360, H = 58, left = 8, right = 12, span = POLICY.budget_s;
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
  const items = Array.isArray(body) ? body : [];
  widget.list.replaceChildren(...items.map((item) => text("li", String(item))));
}

/** Starts a widget's action; `pressedAt` (a `performance.now()`) is the dashboard clock's zero. */
async function run(widget, pressedAt) {
  const controller = new AbortController();
  const me = { controller, events: [], receipt: null };
  widget.action = me;
  const owns = () => widget.action === me;
  const runId = crypto.randomUUID();
  const offset = (performance.now() - pressedAt) / 1000;
  const now = () => (performance.now() - pressedAt) / 1000;
  const redraw = () => owns() && draw(widget, spans(me.events, offset, now()));
  const ticker = setInterval(redraw, 100);
  Object.assign(widget.root.dataset, { run: runId, outcome: "" });
  showLast(widget, null);
  showList(widget, []);
  const { collection, scenario } = widget.spec;
  const url = `/palettes?collection=${collection}&scenario=${scenario}&run=${encodeURIComponent(runId)}`;
  try {
    const result = await fetchWithBudget(url, {
      policy: POLICY,
      signal: controller.signal,
      screen: `dashboard-${collection}`,
      share: "tabs",
      onUpdate(update) {
        if (!owns()) return;
        me.events.push(...update.events);
        me.receipt = update.events.filter((e) => e.event === "receipt").pop() ?? me.receipt;
        showState(widget, update.visible);
        showLast(widget, me.receipt);
        redraw();
      },
    });
    if (!owns()) return;
    showState(widget, result.visible);
    widget.root.dataset.outcome = result.outcome;
    if (result.outcome === "success") showList(widget, result.body);
  } catch (e) {
    if (e.name !== "AbortError" && owns()) showState(widget, [`Could not start: ${e.message}`]);
  } finally {
    clearInterval(ticker);
    if (owns()) {
      draw(widget, spans(me.events, offset));
      widget.action = null;
    }
  }
}

/** One press: a new action for every widget, at the same moment. */
function load() {
  const pressedAt = performance.now();
  for (const widget of widgets) run(widget, pressedAt);
}

/** The Rate limits panel, from `rateLimits()` now. */
function showLimits() {
  const limits = rateLimits();
  const lines = limits.map(({ origin, until_s }) => {
    const until = new Date(Date.now() + until_s * 1000).toLocaleTimeString();
    return `${origin}: the service asked us to wait until ${until} (${seconds(until_s)} s from now).`;
  });
  if (!lines.length) lines.push("No rate limit in force: every origin may be asked now.");
  $("rate-limits").replaceChildren(...lines.map((line) => text("p", line)));
}

/** Builds the widgets and wires the Load button; call once, after the module's init(). */
export function mountDashboard() {
  widgets.push(...WIDGETS.map(build));
  $("widgets").replaceChildren(...widgets.map((w) => w.root));
  for (const widget of widgets) draw(widget, spans([], 0));
  $("dash-load").addEventListener("click", load);
}

/** The dashboard is shown: read the rate limits live. */
export function showDashboard() {
  showLimits();
  if (limitsTimer === null) limitsTimer = setInterval(showLimits, LIMITS_EVERY_MS);
}

/** The dashboard is left: every widget's action ends, and the panel stops reading. */
export function leaveDashboard() {
  clearInterval(limitsTimer);
  limitsTimer = null;
  for (const widget of widgets) {
    if (!widget.action) continue;
    widget.action.controller.abort();
    widget.action = null;
    widget.root.dataset.outcome = "user_left";
    showState(widget, ["Stopped: you left this screen. Nothing more was sent."]);
  }
}
