// The Palette List screen: one button press is one action with one budget. Everything taken
// from a response is inserted as text (textContent), never as HTML.
// The full build: the page also runs the model alone (simulate) for its prediction row.
import init, { fetchWithBudget, simulate } from "/pkg-full/retry_budget.js";
import { leaveDashboard, mountDashboard, showDashboard } from "./dashboard.js";
import { mountFleet, showFleet } from "./fleet.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const SCREEN = "palette-list";

/** The action that owns the palette screen now: its abort controller and run id. */
let current = null;
let scenarios = [];
/** What the server injects into each faulted scenario (server/transport-faults.json), by name. */
let faults = {};
/** Where /palettes is fetched from: this page's origin, or `?api=ORIGIN` (another origin the
 *  server also listens on; the Content-Security-Policy allows only the server's own origins). */
let api = "";

function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

function seconds(x) {
  return Number.isInteger(x) ? `${x}` : x.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
}

function showState(lines) {
  $("state").replaceChildren(...lines.map((line) => text("p", line)));
}

function showLast(receipt, policy) {
  if (!receipt) {
    $("last-status").textContent = "none yet";
    for (const id of ["last-raw", "last-kind", "last-at"]) $(id).textContent = "-";
    return;
  }
  const ra = receipt.retry_after;
  $("last-status").textContent = String(receipt.status);
  $("last-raw").textContent = ra.raw === null ? "(absent)" : JSON.stringify(ra.raw);
  const delay = ra.delay_s === null ? "" : `, a ${seconds(ra.delay_s)}-second delay`;
  const kinds = {
    seconds: "delay-seconds",
    date: "an HTTP-date",
    // A cross-origin response that does not list Retry-After in Access-Control-Expose-Headers
    // hides it from the page, and a hidden header reads exactly like an absent one.
    missing: "unavailable: the response had no Retry-After, or it was hidden from this page (a cross-origin response that does not expose it)",
    invalid: "invalid",
  };
  let reading = `${kinds[ra.kind] ?? ra.kind}${delay}`;
  if (receipt.status >= 200 && receipt.status < 300) {
    reading += " (not needed: the request succeeded)";
  } else if (!policy?.retry_statuses?.includes(receipt.status)) {
    reading += ` (not used: ${receipt.status} is not retried)`;
  } else if (ra.kind === "missing" || ra.kind === "invalid") {
    reading += "; the local fallback applies";
  }
  $("last-kind").textContent = reading;
  $("last-at").textContent = `${seconds(receipt.at_s)} s into the action (${receipt.wall})`;
}

function showList(body) {
  const items = Array.isArray(body) ? body : [];
  $("palettes").replaceChildren(
    ...(items.length ? items.map((item) => text("li", String(item))) : [text("li", "Nothing loaded.", "empty")]),
  );
}

/** Rows of bars for one trace: requests, waits, caps reserved, the stop. */
function rows(events, policy, now) {
  const out = { requests: [], waits: [], caps: [], stop: null };
  let open = null;
  let wait = null;
  for (const e of events) {
    switch (e.event) {
      case "start":
        if (wait) out.waits.push([wait.at_s, e.at_s]), (wait = null);
        open = e;
        out.caps.push([e.at_s, e.at_s + policy.attempt_cap_s]);
        break;
      case "receipt":
      case "failure":
        if (open) out.requests.push([open.at_s, e.at_s, e.status ?? e.error]), (open = null);
        break;
      case "wait":
        wait = e;
        break;
      case "left":
      case "stop":
        if (open) out.requests.push([open.at_s, e.at_s, "left"]), (open = null);
        if (wait) out.waits.push([wait.at_s, e.at_s]), (wait = null);
        if (e.event === "stop") out.stop = [e.at_s, e.outcome];
        break;
    }
  }
  if (open && now !== undefined) out.requests.push([open.at_s, now, "…"]);
  if (wait && now !== undefined) out.waits.push([wait.at_s, now]);
  return out;
}

function drawTimeline(live, model, policy, now) {
  const budget = policy.budget_s;
  const span = Math.max(budget, live.stop?.[0] ?? 0, model?.stop?.[0] ?? 0);
  const W = 960, left = 90, right = 20, rowH = 34;
  const x = (t) => left + (Math.min(t, span) / span) * (W - left - right);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${rowH * 2 + 40}`);
  const add = (tag, attrs, content) => {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (content !== undefined) el.textContent = content;
    svg.append(el);
    return el;
  };
  const drawRow = (r, y, label) => {
    add("text", { x: 4, y: y + 20, class: "row-label" }, label);
    for (const [a, b] of r.caps) add("rect", { x: x(a), y: y + 2, width: Math.max(1, x(b) - x(a)), height: rowH - 8, class: "cap" });
    for (const [a, b] of r.waits) add("rect", { x: x(a), y: y + 10, width: Math.max(1, x(b) - x(a)), height: rowH - 24, class: "wait" });
    for (const [a, b, what] of r.requests) {
      add("rect", { x: x(a), y: y + 6, width: Math.max(2, x(b) - x(a)), height: rowH - 16, class: "request" });
      add("text", { x: x(a) + 3, y: y + 21, class: "bar-label" }, String(what));
    }
    if (r.stop) {
      add("line", { x1: x(r.stop[0]), x2: x(r.stop[0]), y1: y, y2: y + rowH - 4, class: "stop" });
      add("text", { x: Math.min(x(r.stop[0]) + 4, W - 150), y: y + rowH - 6, class: "stop-label" }, `${r.stop[1]} at ${seconds(r.stop[0])} s`);
    }
  };
  if (model) drawRow(model, 4, "model");
  drawRow(live, rowH + 8, "live");
  add("line", { x1: x(budget), x2: x(budget), y1: 0, y2: rowH * 2 + 14, class: "deadline" });
  for (let t = 0; t <= span; t += span > 40 ? 10 : 2) {
    add("text", { x: x(t), y: rowH * 2 + 32, class: "tick", "text-anchor": "middle" }, `${t}`);
  }
  add("text", { x: x(budget) - 4, y: rowH * 2 + 22, class: "tick", "text-anchor": "end" }, `deadline ${seconds(budget)} s`);
  $("timeline").replaceChildren(svg);
}

function selected() {
  return scenarios.find((s) => s.name === $("scenario").value);
}

function describe(scenario) {
  $("scenario-about").textContent = scenario?.about ?? "";
  const notes = [];
  const fault = scenario && faults[scenario.name];
  if (fault) {
    const list = fault.faults.map((f) => `${f.fault.replaceAll("_", " ")} on response ${f.attempt}`).join(", ");
    notes.push(`The server injects a transport fault: ${list}. The model row shows "${fault.base}" without it.`);
    if (fault.needs_cross_origin && !api) notes.push("This fault only shows cross-origin: open this page with ?api= set to the server's second origin.");
  }
  if (api) notes.push(`Requests go to another origin: ${api}.`);
  if (scenario?.user_leaves_at_s != null) notes.push(`This scenario leaves the screen (a route change) ${scenario.user_leaves_at_s} s after Load.`);
  if (scenario?.timer_late_by_s?.some((s) => s > 0)) notes.push(`Its wait timers are made late by ${scenario.timer_late_by_s.join(", ")} s, as in a throttled background tab.`);
  if (scenario && !scenario.wall_clock_at_start) notes.push("The server sends no usable clock mapping for its date, so the page has no trusted clock to read it.");
  if (scenario?.origin_blocks?.length || scenario?.jitter_draws?.length || scenario?.policy?.jitter_s) {
    notes.push("Its origin blocks and jitter draws are played by the model row only: in the live run no other action on the origin tells it of a block, and the browser draws its own jitter.");
  }
  $("scenario-note").textContent = notes.join(" ");
  $("scenario-note").hidden = notes.length === 0;
}

/** Ends the screen's action (if any) as a departure. */
function leaveScreen() {
  if (current) current.controller.abort();
  current = null;
}

async function load() {
  leaveScreen();
  const scenario = selected();
  if (!scenario) return;
  const run = crypto.randomUUID();
  const controller = new AbortController();
  const me = { controller, run, scenario: scenario.name };
  current = me;
  const owns = () => current === me;

  let model = null;
  try {
    model = rows(simulate(scenario).events, policyOf(scenario));
  } catch (e) {
    model = null;
  }
  const policy = policyOf(scenario);
  const events = [];
  let lastReceipt = null;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const redraw = () => owns() && drawTimeline(rows(events, policy, elapsed()), model, policy, elapsed());
  const ticker = setInterval(redraw, 100);
  let leaveTimer = null;
  if (scenario.user_leaves_at_s != null) {
    leaveTimer = setTimeout(() => { if (owns()) location.hash = "#/about"; }, scenario.user_leaves_at_s * 1000);
  }

  showList([]);
  showLast(null);
  document.body.dataset.outcome = "";
  document.body.dataset.run = run;
  const url = `${api}/palettes?collection=coast&scenario=${encodeURIComponent(scenario.name)}&run=${encodeURIComponent(run)}`;
  try {
    const result = await fetchWithBudget(url, {
      policy,
      signal: controller.signal,
      screen: SCREEN,
      timerLateBy_s: scenario.timer_late_by_s ?? [],
      onUpdate(update) {
        if (!owns()) return;
        for (const e of update.events) {
          events.push(e);
          if (e.event === "receipt") lastReceipt = { ...e, wall: new Date().toLocaleTimeString() };
        }
        showState(update.visible);
        showLast(lastReceipt, policy);
        redraw();
      },
    });
    if (!owns()) return;
    showState(result.visible);
    document.body.dataset.outcome = result.outcome;
    if (result.outcome === "success") showList(result.body);
  } catch (e) {
    if (e.name === "AbortError") {
      // The screen let go: this result belongs to nobody, and must not touch the view.
      return;
    }
    if (owns()) showState([`Could not start: ${e.message}`]);
  } finally {
    clearInterval(ticker);
    clearTimeout(leaveTimer);
    if (owns()) {
      drawTimeline(rows(events, policy), model, policy);
      current = null;
    }
  }
}

function policyOf(scenario) {
  const p = scenario.policy ?? {};
  return {
    budget_s: p.budget_s ?? 20,
    max_attempts: p.max_attempts ?? 3,
    attempt_cap_s: p.attempt_cap_s ?? 4,
    min_wait_s: p.min_wait_s ?? 1,
    fallback_base_s: p.fallback_base_s ?? 2,
    retry_statuses: p.retry_statuses ?? [429],
    trust_local_clock: p.trust_local_clock ?? false,
  };
}

/** The screen the location names: "about", "dashboard", "fleet" or "palettes". */
function screenOf(hash) {
  if (hash === "#/about") return "about";
  if (hash === "#/dashboard") return "dashboard";
  if (hash === "#/fleet") return "fleet";
  return "palettes";
}

function route() {
  const screen = screenOf(location.hash);
  if (screen !== "palettes" && current) {
    // Leaving the palette screen ends its action.
    const was = current;
    leaveScreen();
    showState([
      "Stopped: you left this screen.",
      `Run ${was.run.slice(0, 8)} of "${was.scenario}" was abandoned; nothing more was sent.`,
    ]);
    document.body.dataset.outcome = "user_left";
  }
  if (screen === "dashboard") showDashboard();
  else leaveDashboard();
  $("screen-palettes").hidden = screen !== "palettes";
  $("screen-about").hidden = screen !== "about";
  $("screen-dashboard").hidden = screen !== "dashboard";
  $("screen-fleet").hidden = screen !== "fleet";
  if (screen === "fleet") showFleet();
}

/** The origin named by `?api=`, if it is a valid http(s) URL; "" (this origin) otherwise. */
function apiOrigin(params) {
  const wanted = params.get("api");
  if (!wanted) return "";
  try {
    const url = new URL(wanted);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin;
  } catch (e) {
    // Not a URL: ignored below.
  }
  showState([`Ignoring ?api=${wanted}: not an http(s) origin. Requests go to this page's origin.`]);
  return "";
}

async function main() {
  await init();
  const params = new URLSearchParams(location.search);
  api = apiOrigin(params);
  // Every scenario the server answers for: every fixture file, then the faulted ones.
  const response = await fetch("/scenarios");
  if (!response.ok) throw new Error(`GET /scenarios answered ${response.status}`);
  const listing = await response.json();
  scenarios = listing.scenarios;
  faults = listing.faults ?? {};
  $("scenario").replaceChildren(...listing.files.map((file) => {
    const group = document.createElement("optgroup");
    group.label = file.faulted ? `${file.file} (server faults)` : file.file;
    group.append(...file.scenarios.map((name) => {
      const option = text("option", name);
      option.value = name;
      return option;
    }));
    return group;
  }));
  const wanted = params.get("scenario");
  if (wanted && scenarios.some((s) => s.name === wanted)) $("scenario").value = wanted;
  describe(selected());
  $("scenario").addEventListener("change", () => describe(selected()));
  $("load").addEventListener("click", load);
  $("leave-route").addEventListener("click", () => { location.hash = "#/about"; });
  mountDashboard();
  mountFleet();
  window.addEventListener("hashchange", route);
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) {
      // Restored from the back/forward cache: the old action ended on pagehide; start nothing.
      current = null;
      showState(["This page was restored. The earlier action ended when you left; press Load palettes to start a new budget."]);
    }
  });
  route();
  $("load").disabled = false;
  document.body.dataset.ready = "true";
}

main().catch((e) => showState([`The page could not start: ${e.message}`]));
