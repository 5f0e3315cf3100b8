// The Palette List's timeline: the model's prediction and the live run, drawn to scale over the
// budget at the width the page gives it. Every label is measured and put in the first lane
// where it touches no other, so none overlaps another at any width; a refused wait is drawn
// past the deadline mark. What is drawn comes from the report (its events, and its stop's
// cause for what the budget refused); the words are the model's own (the visible state, the
// step table's last decision).

import { SVG, addTo } from "./svg.js";
import { seconds } from "./view.js";

const PAD = 8;
const LINE = 16;
const BAR = 26;
const GAP = 4;

/**
 * Intervals of one trace, in seconds on the drawing's clock (`offset` plus the action's own):
 * requests, waits, the caps reserved before each start (`cap_s` long), the blocks heard from
 * other actions, and the stop. `now` draws what is still running up to now.
 */
export function spans(events, { cap_s, now, offset = 0 }) {
  const out = { requests: [], waits: [], caps: [], blocks: [], stop: null };
  const at = (t) => t + offset;
  let open = null;
  let wait = null;
  const endWait = (t) => wait && (out.waits.push([at(wait.at_s), at(t)]), (wait = null));
  const endRequest = (t, what) => open && (out.requests.push([at(open.at_s), at(t), what]), (open = null));
  for (const e of events) {
    switch (e.event) {
      case "start":
        endWait(e.at_s);
        open = e;
        out.caps.push([at(e.at_s), at(e.at_s + cap_s)]);
        break;
      case "receipt":
      case "failure":
        endRequest(e.at_s, e.status ?? e.error);
        break;
      case "wait":
        wait ??= e;
        break;
      case "blocked":
        out.blocks.push([at(e.at_s), at(e.until_s)]);
        break;
      case "left":
      case "stop":
        endRequest(e.at_s, "left");
        endWait(e.at_s);
        if (e.event === "stop") out.stop = at(e.at_s);
        break;
    }
  }
  if (now !== undefined) endRequest(now - offset, "…"), endWait(now - offset);
  return out;
}

/**
 * One track of the timeline from a report (or a live run so far: its events, steps and visible
 * lines): its spans, its stop's words, and what the budget refused, from the stop's cause.
 */
export function track(report, cap_s, now) {
  const t = spans(report.events, { cap_s, now });
  const headline = report.cause ? report.visible[0] : null;
  t.stopWords = t.stop === null || !headline ? null : `${seconds(t.stop)} s: ${headline}`;
  t.refused = refusedOf(report);
  return t;
}

/** The wait (and its cap) the budget refused, from the stop's cause: where it would have
 *  begun, the start it would have given and the end of its cap, with the model's words for it
 *  (the step table's last decision); null when nothing was refused. */
function refusedOf(report) {
  const c = report.cause;
  const words = report.steps.at(-1)?.decision ?? "";
  switch (c?.kind) {
    case "refused_wait":
      return { from: report.elapsed_s, start: c.until_s, capEnd: c.cap_end_s, words };
    case "late_wake":
      return { from: c.woke_s, start: c.woke_s, capEnd: c.cap_end_s, words };
    case "origin_blocked":
      return { from: c.at_s, start: c.until_s, capEnd: c.cap_end_s, words };
    default:
      return null;
  }
}

/** The seconds the axis covers: the budget, and past it what was refused, within twice it. */
export function spanOf(tracks, policy) {
  let end = policy.budget_s;
  for (const t of tracks) {
    if (t.stop !== null) end = Math.max(end, t.stop);
    if (t.refused) end = Math.max(end, t.refused.capEnd);
    for (const [, b] of t.requests) end = Math.max(end, b);
  }
  return Math.min(end, 2 * policy.budget_s);
}

/** Whether two boxes come closer than 2 px to each other. */
function touches(a, b) {
  return a.x < b.x + b.width + 2 && b.x < a.x + a.width + 2 && a.y < b.y + b.height + 1 && b.y < a.y + a.height + 1;
}

/** Draws into `svg` and places labels in lanes so that no two of them overlap. */
class Canvas {
  constructor(svg, width) {
    this.svg = svg;
    this.width = width;
    this.placed = [];
    this.bottom = 0;
    // The distance between two lines of labels: LINE, or more if the font needs it.
    this.line = LINE;
  }

  add(tag, attrs, content) {
    return addTo(this.svg, tag, attrs, content);
  }

  /** A label at `x` (its start, or its end for `anchor: "end"`), on the first free lane from
   *  `y`, moved inside the drawing and wrapped when it is wider; returns the next free y. */
  label(content, x, y, cls, anchor = "start") {
    let bottom = y;
    for (const line of this.wrap(content, cls)) bottom = this.placeLine(line, x, bottom, cls, anchor) + this.line;
    return bottom;
  }

  /** One line of a label: at `y`, or lower by whole lines until its box touches no other. */
  placeLine(content, x, y, cls, anchor) {
    const el = this.add("text", { class: cls, y }, content);
    const w = el.getBBox().width;
    el.setAttribute("x", Math.max(PAD, Math.min(anchor === "end" ? x - w : x, this.width - PAD - w)));
    let box = el.getBBox();
    this.line = Math.max(this.line, Math.ceil(box.height) + 2);
    for (let lane = y; this.placed.some((b) => touches(b, box)); box = el.getBBox()) {
      lane += this.line;
      el.setAttribute("y", lane);
    }
    this.placed.push(box);
    this.bottom = Math.max(this.bottom, box.y + box.height);
    return Number(el.getAttribute("y"));
  }

  /** `content` in lines that each fit the drawing's width, split between words. */
  wrap(content, cls) {
    const probe = this.add("text", { class: cls, x: 0, y: 0 });
    const lines = [];
    let line = "";
    // A unit stays with its number: "32 s" is never split.
    for (const word of content.replace(/ s\b/g, "\u00a0s").split(" ")) {
      const next = line ? `${line} ${word}` : word;
      probe.textContent = next;
      if (line && probe.getBBox().width > this.width - 2 * PAD) lines.push(line), (line = word);
      else line = next;
    }
    probe.remove();
    return [...lines, line].map((l) => l.replaceAll("\u00a0", " "));
  }

  /** A text that must fit inside [x0, x1] or not be drawn. */
  inside(content, x0, x1, y, cls) {
    const el = this.add("text", { class: cls, x: x0 + 2, y }, content);
    if (el.getBBox().width + 4 > x1 - x0) el.remove();
  }

  rect(x0, x1, y, h, cls, min = 1) {
    return this.add("rect", { x: x0, y, width: Math.max(min, x1 - x0), height: h, class: cls });
  }
}

function drawBars(c, t, x, y) {
  for (const [a, b] of t.caps) c.rect(x(a), x(b), y, BAR, "cap");
  for (const [a, b] of t.waits) c.rect(x(a), x(b), y + 8, BAR - 16, "wait");
  for (const [a, b, what] of t.requests) {
    c.rect(x(a), x(b), y + 4, BAR - 8, "request", 2);
    c.inside(String(what), x(a), x(b), y + 17, "bar-label");
  }
}

/** The refused wait and its cap: dashed where they fit, shaded past the deadline. */
function drawRefused(c, t, x, y, policy) {
  const r = t.refused;
  c.rect(x(r.from), x(r.start), y + 8, BAR - 16, "refused refused-wait");
  c.rect(x(r.start), x(r.capEnd), y + 2, BAR - 4, "refused refused-cap");
  if (r.capEnd > policy.budget_s) {
    c.rect(x(Math.max(r.from, policy.budget_s)), x(r.capEnd), y + 2, BAR - 4, "refused refused-past");
  }
}

/** One track: its title, its bars, its stop and refusal labels; returns the next free y. */
function drawTrack(c, t, title, x, y, policy) {
  const barY = c.label(title, PAD, y + 12, "row-label") - 10;
  drawBars(c, t, x, barY);
  if (t.refused) drawRefused(c, t, x, barY, policy);
  let next = barY + BAR + 14;
  if (t.stop !== null) {
    c.add("line", { x1: x(t.stop), x2: x(t.stop), y1: barY - 2, y2: barY + BAR + 2, class: "stop" });
    if (t.stopWords) next = c.label(t.stopWords, x(t.stop), next, "stop-label");
  }
  if (t.refused) next = c.label(t.refused.words, x(t.refused.from), next, "refused-label");
  return Math.max(next, barY + BAR + GAP, c.bottom + LINE - 4) + GAP;
}

/** The axis's tick spacing in seconds, at `perSecond` px a second over `span` seconds: the
 *  smallest of 1, 2, 5, 10, 20, 50, ... that leaves 36 px between ticks; Infinity (a tick at 0
 *  alone) on an axis too narrow for two ticks that far apart. */
export function tickStep(span, perSecond) {
  let step = 1;
  for (let k = 1; step * perSecond < 36 && step < span; k += 1) step = [1, 2, 5][k % 3] * 10 ** Math.floor(k / 3);
  return step * perSecond >= 36 ? step : Infinity;
}

function drawAxis(c, span, x, y) {
  const step = tickStep(span, (x(span) - x(0)) / span);
  for (let t = 0; t <= span + 1e-9; t += step) {
    c.add("line", { x1: x(t), x2: x(t), y1: y - 4, y2: y, class: "tick-mark" });
    c.label(`${t}`, x(t) - 4, y + 12, "tick");
  }
  return Math.max(y + LINE, c.bottom) + GAP;
}

/**
 * Draws the model's track (if any) above the live one (if any: a static page without an
 * endpoint runs none) in `container`, to scale over the budget; `live` and `model` come from
 * `track`. Nothing is drawn while it has no width.
 */
export function drawTimeline(container, live, model, policy) {
  const width = container.clientWidth;
  if (!width) return;
  const tracks = [model, live].filter(Boolean);
  const span = spanOf(tracks, policy);
  const x = (t) => PAD + (Math.min(t, span) / span) * (width - 2 * PAD);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", width);
  container.replaceChildren(svg);
  const c = new Canvas(svg, width);
  let y = c.label(`deadline ${seconds(policy.budget_s)} s`, x(policy.budget_s) - 4, 12, "deadline-label", "end");
  const top = y - 10;
  if (model) y = drawTrack(c, model, "Model prediction", x, y, policy);
  if (live) y = drawTrack(c, live, "Live run", x, y, policy);
  c.add("line", { x1: x(policy.budget_s), x2: x(policy.budget_s), y1: top, y2: y, class: "deadline" });
  const height = drawAxis(c, span, x, y + 4);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  container.setAttribute("aria-label", summary(live, model, policy));
}

/** The timeline in a sentence, for those who cannot see it. */
function summary(live, model, policy) {
  const said = (t) => [t.stopWords ?? "running.", t.refused?.words && `${t.refused.words}.`].filter(Boolean).join(" ");
  const parts = [`Timeline over the ${seconds(policy.budget_s)}-second budget.`];
  if (model) parts.push(`Model prediction: ${said(model)}`);
  parts.push(live ? `Live run: ${said(live)}` : "No live run.");
  return parts.join(" ");
}
