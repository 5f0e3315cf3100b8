// The Palette List's timeline: the model's prediction and the live run, drawn to scale over the
// budget at the width the page gives it. Every label is measured and put in the first lane
// where it touches no other, so none overlaps another at any width; a refused wait is drawn
// past the deadline mark.

import { OUTCOME_WORDS, refusal, refusalLabel, seconds } from "./steps.js";
import { SVG, addTo } from "./svg.js";

const PAD = 8;
const LINE = 16;
const BAR = 26;
const GAP = 4;

/** Bars of one trace: requests, waits, caps reserved, the stop, and the refused wait. */
export function bars(events, policy, now) {
  const out = { requests: [], waits: [], caps: [], stop: null, refused: refusal(events, policy) };
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

/** The seconds the axis covers: the budget, and past it what was refused, within twice it. */
function spanOf(tracks, policy) {
  let end = policy.budget_s;
  for (const t of tracks) {
    if (t.stop) end = Math.max(end, t.stop[0]);
    if (t.refused) end = Math.max(end, t.refused.start + policy.attempt_cap_s);
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
  const end = r.start + policy.attempt_cap_s;
  c.rect(x(r.from), x(r.start), y + 8, BAR - 16, "refused refused-wait");
  c.rect(x(r.start), x(end), y + 2, BAR - 4, "refused refused-cap");
  if (end > policy.budget_s) c.rect(x(Math.max(r.from, policy.budget_s)), x(end), y + 2, BAR - 4, "refused refused-past");
}

/** One track: its title, its bars, its stop and refusal labels; returns the next free y. */
function drawTrack(c, t, title, x, y, policy) {
  const barY = c.label(title, PAD, y + 12, "row-label") - 10;
  drawBars(c, t, x, barY);
  if (t.refused) drawRefused(c, t, x, barY, policy);
  let next = barY + BAR + 14;
  if (t.stop) {
    c.add("line", { x1: x(t.stop[0]), x2: x(t.stop[0]), y1: barY - 2, y2: barY + BAR + 2, class: "stop" });
    const words = OUTCOME_WORDS[t.stop[1]] ?? t.stop[1];
    next = c.label(`${words} (at ${seconds(t.stop[0])} s)`, x(t.stop[0]), next, "stop-label");
  }
  if (t.refused) next = c.label(refusalLabel(t.refused, policy), x(t.refused.from), next, "refused-label");
  return Math.max(next, barY + BAR + GAP, c.bottom + LINE - 4) + GAP;
}

function drawAxis(c, span, x, y) {
  // The smallest of 1, 2, 5, 10, 20, 50, ... seconds that leaves 36 px between ticks.
  let step = 1;
  for (let k = 0; x(step) - x(0) < 36; k += 1) step = [1, 2, 5][(k + 1) % 3] * 10 ** Math.floor((k + 1) / 3);
  for (let t = 0; t <= span + 1e-9; t += step) {
    c.add("line", { x1: x(t), x2: x(t), y1: y - 4, y2: y, class: "tick-mark" });
    c.label(`${t}`, x(t) - 4, y + 12, "tick");
  }
  return Math.max(y + LINE, c.bottom) + GAP;
}

/**
 * Draws the model's track (if any) above the live one in `container`, to scale over the
 * budget; `live` and `model` come from `bars`. Nothing is drawn while it has no width.
 */
export function drawTimeline(container, live, model, policy) {
  const width = container.clientWidth;
  if (!width) return;
  const tracks = model ? [model, live] : [live];
  const span = spanOf(tracks, policy);
  const x = (t) => PAD + (Math.min(t, span) / span) * (width - 2 * PAD);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", width);
  container.replaceChildren(svg);
  const c = new Canvas(svg, width);
  let y = c.label(`deadline ${seconds(policy.budget_s)} s`, x(policy.budget_s) - 4, 12, "deadline-label", "end");
  const top = y - 10;
  if (model) y = drawTrack(c, model, "Model prediction", x, y, policy);
  y = drawTrack(c, live, "Live run", x, y, policy);
  c.add("line", { x1: x(policy.budget_s), x2: x(policy.budget_s), y1: top, y2: y, class: "deadline" });
  const height = drawAxis(c, span, x, y + 4);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  container.setAttribute("aria-label", summary(live, model, policy));
}

/** The timeline in a sentence, for those who cannot see it. */
function summary(live, model, policy) {
  const said = (t) => (t.stop ? `${OUTCOME_WORDS[t.stop[1]] ?? t.stop[1]} at ${seconds(t.stop[0])} s` : "running");
  const refused = (t) => (t.refused ? `, ${refusalLabel(t.refused, policy)}` : "");
  const parts = [`Timeline over the ${seconds(policy.budget_s)}-second budget.`];
  if (model) parts.push(`Model prediction: ${said(model)}${refused(model)}.`);
  parts.push(`Live run: ${said(live)}${refused(live)}.`);
  return parts.join(" ");
}
