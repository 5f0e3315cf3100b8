// The Palette List screen: one button press is one action with one budget. Everything taken
// from a response is inserted as text (textContent), never as HTML. The page decides nothing:
// what it shows (the visible state, the step tables, the refused wait) is the model's report.
// The full build: the page also runs the model alone (simulate) for its prediction row.
// Served by the fixture server, it runs every scenario live too; from any static server
// (`scripts/site`), it shows the model's prediction and says what a live run needs.
import init, { defaultPolicy, fetchWithBudget, simulate } from "./pkg-full/retry_budget.js";
import { leaveDashboard, mountDashboard, showDashboard } from "./dashboard.js";
import { mountFleet, showFleet } from "./fleet.js";
import { drawTimeline, track } from "./timeline.js";
import { $, lastReceipt, lastResponse, listItems, runId, seconds, showLines, text } from "./view.js";

const SCREEN = "palette-list";

/** The action that owns the palette screen now: its abort controller and run id. */
let current = null;
let scenarios = [];
/** What the server injects into each faulted scenario (server/transport-faults.json), by name. */
let faults = {};
/** Where /palettes is fetched from: this page's origin, or `?api=ORIGIN` (another origin the
 *  server also listens on; the Content-Security-Policy allows only the server's own origins). */
let api = "";
/** Whether the fixture server serves this page (and so answers /palettes for every scenario). */
let served = false;

function showState(lines) {
  showLines($("state"), lines);
}

/** The Last HTTP response panel, from a run's events so far: the last receipt, how the model
 *  used it (the event after it), and `wall`, the local time it arrived. */
function showLast(events, wall) {
  const { receipt, next } = lastReceipt(events);
  const shown = lastResponse(receipt, next);
  $("last-status").textContent = shown.status;
  $("last-raw").textContent = shown.raw;
  $("last-kind").textContent = shown.reading;
  $("last-ratelimit").textContent = shown.ratelimit;
  $("last-at").textContent = receipt ? `${seconds(receipt.at_s)} s into the action (${wall})` : "-";
}

/** The loaded list (`listItems`), or that nothing was loaded. */
function showList(body) {
  const items = listItems(body).map((item) => text("li", item));
  $("palettes").replaceChildren(...(items.length ? items : [text("li", "Nothing loaded.", "empty")]));
}

/** The picker's groups, in this order; a fixture file not named here is a group of its own. */
const GROUPS = [
  { key: "B62-16-schedules.json", label: "Source document: schedules and stop table" },
  { key: "hostile-servers.json", label: "Hostile servers" },
  { key: "faulted", label: "Transport faults (the server injects them)" },
  { key: "load", label: "Load and races (the load and race test pages)" },
  { key: "shared-limits.json", label: "Shared rate limits (section 4; the model row only)" },
  { key: "dashboard.json", label: "Dashboard widgets" },
  { key: "ratelimit-fields.json", label: "RateLimit fields (read when the policy asks)" },
  { key: "live-sharing.json", label: "Live sharing checks (the sharing test page)" },
];

/** Which group a scenario of `file` belongs to: the load and race pages' scenarios (named
 *  `load-...` and `race-...`) live in hostile-servers.json but are grouped apart. */
function groupOf(file, name) {
  if (file.faulted) return "faulted";
  if (/^(load|race)-/.test(name)) return "load";
  return file.file;
}

/** The picker's `<optgroup>`s, each option titled with its scenario's `about`. */
function pickerGroups(files) {
  const about = new Map(scenarios.map((s) => [s.name, s.about ?? ""]));
  const groups = new Map(GROUPS.map((g) => [g.key, { label: g.label, names: [] }]));
  for (const file of files) {
    for (const name of file.scenarios) {
      const key = groupOf(file, name);
      if (!groups.has(key)) groups.set(key, { label: key, names: [] });
      groups.get(key).names.push(name);
    }
  }
  return [...groups.values()].filter((g) => g.names.length).map((g) => {
    const group = document.createElement("optgroup");
    group.label = g.label;
    group.append(...g.names.map((name) => {
      const option = text("option", name);
      option.value = name;
      option.title = about.get(name);
      return option;
    }));
    return group;
  });
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
  // From a static server, requests go to the endpoint typed above, or nowhere.
  if (api && served) notes.push(`Requests go to another origin: ${api}.`);
  if (scenario?.user_leaves_at_s != null) notes.push(`This scenario leaves the screen (a route change) ${scenario.user_leaves_at_s} s after Load.`);
  if (scenario?.timer_late_by_s?.some((s) => s > 0)) notes.push(`Its wait timers are made late by ${scenario.timer_late_by_s.join(", ")} s, as in a throttled background tab.`);
  // Only where the model read a Retry-After date: without one, no clock is needed.
  const dated = scenario && modelReport(scenario)?.events.some((e) => e.retry_after?.kind === "date");
  if (dated && !scenario.wall_clock_at_start) {
    notes.push(scenario.policy?.trust_local_clock
      ? "The server sends no usable clock mapping for its date; the policy lets the page's own clock read it."
      : "The server sends no usable clock mapping for its date, so the page has no trusted clock to read it.");
  }
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

/** What the timeline and the step tables show now (redrawn when the page's width changes). */
let view = null;

/** The timeline, at the width the page gives it now. */
function showTimeline() {
  if (!view) return;
  const { policy, live, model, now } = view;
  const cap = policy.attempt_cap_s;
  drawTimeline($("timeline"), live && track(live, cap, now), model && track(model, cap), policy);
}

/** The timeline and both step tables: the model's rows, for its prediction and the live run. */
function showRun() {
  if (!view) return;
  showTimeline();
  const { scenario, live, model } = view;
  showSteps("steps-live", live ? `Live run of ${scenario}` : `No live run of ${scenario}`, live?.steps ?? []);
  showSteps("steps-model", model ? `Model prediction for ${scenario}` : `No model prediction for ${scenario}`, model?.steps ?? []);
}

/** The step tables' columns after Step, which a narrow layout writes before each cell. */
const STEP_COLUMNS = ["Elapsed interval", "Observed", "Decision"];

/** Fills the step table `id` (its caption and body) with the model's `rows`. The rows carry
 *  their table roles explicitly: the narrow layout displays them as blocks, which would
 *  otherwise drop the table's semantics in some browsers. */
function showSteps(id, caption, rows) {
  const table = $(id);
  table.querySelector("caption").textContent = caption;
  const body = rows.map(({ step, elapsed, observed, decision }) => {
    const cells = [elapsed, observed, decision];
    const tr = document.createElement("tr");
    tr.setAttribute("role", "row");
    const th = text("th", step);
    th.scope = "row";
    th.setAttribute("role", "rowheader");
    tr.append(th, ...cells.map((cell, k) => {
      const td = text("td", cell);
      td.setAttribute("role", "cell");
      td.dataset.label = STEP_COLUMNS[k];
      return td;
    }));
    return tr;
  });
  if (!body.length) {
    const empty = text("td", "Nothing yet.", "empty");
    empty.colSpan = 4;
    empty.setAttribute("role", "cell");
    body.push(document.createElement("tr"));
    body[0].setAttribute("role", "row");
    body[0].append(empty);
  }
  table.tBodies[0].replaceChildren(...body);
}

/** The model's report for `scenario`, or null when it cannot run it. */
function modelReport(scenario) {
  try {
    return simulate(scenario);
  } catch (e) {
    return null;
  }
}

/** The policy the timeline is drawn over: the one the model ran the scenario under, or the
 *  module's defaults when the model refused the scenario. */
function policyOf(model) {
  return model ? model.policy : defaultPolicy();
}

/** The origin live runs go to from a static server: the one typed in the endpoint box, if it
 *  is an http(s) URL; null when there is none. */
function typedEndpoint() {
  try {
    const url = new URL($("endpoint").value.trim());
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch (e) {
    return null;
  }
}

/** From a static server with no endpoint typed: the model's prediction alone, and why. */
function predictOnly(scenario) {
  const model = modelReport(scenario);
  view = { scenario: scenario.name, policy: policyOf(model), live: null, model };
  showList([]);
  showLast([]);
  document.body.dataset.outcome = "";
  showRun();
  showState([
    "No live run: this page is served by a static server, and live runs need a server that plays the scenarios.",
    "Run scripts/run for the fixture server, or type an endpoint that answers GET /palettes above. The model's prediction is drawn below.",
  ]);
}

async function load() {
  leaveScreen();
  const scenario = selected();
  if (!scenario) return;
  if (!served) {
    const endpoint = typedEndpoint();
    if (!endpoint) return predictOnly(scenario);
    api = endpoint;
  }
  const run = runId();
  const controller = new AbortController();
  const me = { controller };
  current = me;
  const owns = () => current === me;

  const model = modelReport(scenario);
  const live = { events: [], steps: [], visible: [], cause: null };
  view = { scenario: scenario.name, policy: policyOf(model), live, model, now: 0 };
  let receivedAt = "";
  const started = performance.now();
  const redraw = (show) => {
    if (!owns()) return;
    view.now = (performance.now() - started) / 1000;
    show();
  };
  const ticker = setInterval(() => redraw(showTimeline), 100);
  let leaveTimer = null;
  // A delay past setTimeout's limit (2^31 - 1 ms, about 24.8 days) would fire at once: such a
  // user never leaves within any budget, so no timer is armed.
  const leaveMs = scenario.user_leaves_at_s * 1000;
  if (scenario.user_leaves_at_s != null && leaveMs <= 2147483647) {
    leaveTimer = setTimeout(() => { if (owns()) location.hash = "#/about"; }, leaveMs);
  }

  showList([]);
  showLast([]);
  document.body.dataset.outcome = "";
  document.body.dataset.run = run;
  const url = `${api}/palettes?collection=coast&scenario=${encodeURIComponent(scenario.name)}&run=${encodeURIComponent(run)}`;
  try {
    const result = await fetchWithBudget(url, {
      policy: scenario.policy,
      // Each run plays its own scripted service: a wait one run's server asked for is not the
      // next run's (the Dashboard is where actions share a service's waits).
      share: "none",
      signal: controller.signal,
      screen: SCREEN,
      testOnlyTimerLateBy_s: scenario.timer_late_by_s ?? [],
      onUpdate(update) {
        if (!owns()) return;
        for (const e of update.events) {
          live.events.push(e);
          if (e.event === "receipt") receivedAt = new Date().toLocaleTimeString();
        }
        Object.assign(live, { steps: update.steps, visible: update.visible });
        showState(update.visible);
        showLast(live.events, receivedAt);
        redraw(showRun);
      },
    });
    if (!owns()) return;
    // The finished report is the live run's record: it draws the last timeline and table.
    view.live = result;
    showState(result.visible);
    document.body.dataset.outcome = result.outcome;
    if (result.outcome === "success") showList(result.body);
  } catch (e) {
    if (e.name === "AbortError") {
      // The screen let go. When a newer run took it, this result belongs to nobody and must not
      // touch the view. When the screen itself was left (a route change, the page hidden),
      // nothing else owns the view: it shows how the action ended, in the model's words.
      if ((owns() || (me.left && current === null)) && e.report) {
        view.live = e.report;
        view.now = undefined;
        showState(e.report.visible);
        document.body.dataset.outcome = e.report.outcome;
        showRun();
      }
      return;
    }
    if (owns()) showState([`Could not start: ${e.message}`]);
  } finally {
    clearInterval(ticker);
    clearTimeout(leaveTimer);
    if (owns()) {
      view.now = undefined;
      showRun();
      current = null;
    }
  }
}


/** The screen the location names: "about", "dashboard", "fleet" or "palettes". */
function screenOf(hash) {
  if (hash === "#/about") return "about";
  if (hash === "#/dashboard") return "dashboard";
  if (hash === "#/fleet") return "fleet";
  return "palettes";
}

/** Shows the screen the location's hash names. After a route change (`event`, a
 *  `hashchange`), the new screen's heading takes the focus, so that a keyboard or screen-reader
 *  user is taken to it; the first load starts at the top of the page, as any page does. */
function route(event) {
  const screen = screenOf(location.hash);
  if (screen !== "palettes" && current) {
    // Leaving the palette screen ends its action; its report says so (see load).
    current.left = true;
    leaveScreen();
  }
  if (screen === "dashboard") showDashboard();
  else leaveDashboard();
  $("screen-palettes").hidden = screen !== "palettes";
  $("screen-about").hidden = screen !== "about";
  $("screen-dashboard").hidden = screen !== "dashboard";
  $("screen-fleet").hidden = screen !== "fleet";
  if (screen === "fleet") showFleet();
  if (event) $(`${screen}-title`).focus();
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

/** Every scenario the page lists: from the fixture server (`GET /scenarios`: every fixture file,
 *  then the faulted ones), or else from the static site's copy of that listing. */
async function scenarioListing() {
  const live = await fetch("scenarios").catch(() => null);
  if (live?.ok) return { listing: await live.json(), served: true };
  const copy = await fetch("scenarios.json");
  if (!copy.ok) {
    throw new Error(`neither GET scenarios (${live?.status ?? "no answer"}) nor scenarios.json (${copy.status}) answered`);
  }
  return { listing: await copy.json(), served: false };
}

async function main() {
  await init();
  const params = new URLSearchParams(location.search);
  api = apiOrigin(params);
  const found = await scenarioListing();
  const listing = found.listing;
  served = found.served;
  document.body.dataset.served = String(served);
  $("endpoint-box").hidden = served;
  if (!served) $("nav-leave").href = "away.html";
  // A static page runs live only against a typed endpoint: ?api= fills it in.
  if (!served && api) $("endpoint").value = api;
  scenarios = listing.scenarios;
  faults = listing.faults ?? {};
  $("scenario").replaceChildren(...pickerGroups(listing.files));
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
  // The timeline is drawn at the width it has: draw it again when that changes.
  let drawnWidth = 0;
  new ResizeObserver(() => {
    const width = $("timeline").clientWidth;
    if (width !== drawnWidth) (drawnWidth = width), showTimeline();
  }).observe($("timeline"));
  route();
  $("load").disabled = false;
  document.body.dataset.ready = "true";
}

main().catch((e) => showState([`The page could not start: ${e.message}`]));
