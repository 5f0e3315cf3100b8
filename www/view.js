// What every screen of the page shows the same way: text elements, seconds, the visible state
// and the last HTTP response. Everything taken from a response is inserted as text, never as HTML.

/** The element with `id`. */
export const $ = (id) => document.getElementById(id);

/** A `tag` element holding `content` as text, with class `className` if given. */
export function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

/** Seconds as the page writes them, the way the model's step table does: a whole number as it
 *  is, else at most two decimals; from a million on (a saturated delay) as its magnitude. */
export function seconds(x) {
  if (x >= 1e6) return x.toExponential(2);
  return Number.isInteger(x) ? `${x}` : x.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
}

/** A figure of the fleet's report written to `places` decimal places, rounded half up from its
 *  decimal value (`fixed(2.625, 2)` is "2.63", `fixed(1.005, 2)` "1.01", where `toFixed` rounds
 *  the nearest double's binary value: "1.00"), as the fleet command writes its table. The
 *  figures are decimals of at most nine places, exact in billionths from 0 to 4,000,000;
 *  outside (no figure of a fleet comes near) the value is written as `toFixed` writes it. */
export function fixed(value, places) {
  if (!(value >= 0 && value <= 4e6)) return value.toFixed(places);
  const billionths = Math.round(value * 1e9);
  const unit = 10 ** (9 - places);
  const kept = Math.floor((2 * billionths + unit) / (2 * unit));
  return (kept / 10 ** places).toFixed(places);
}

/** A fresh id for one run, which the fixture server keys its log by. `crypto.randomUUID` exists
 *  only in secure contexts (https, localhost); a page served over plain http elsewhere (the
 *  static site on a LAN address) draws the same 122 random bits from `getRandomValues`. */
export function runId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Shows `lines` (the visible state) in `el`, one paragraph each. */
export function showLines(el, lines) {
  el.replaceChildren(...lines.map((line) => text("p", line)));
}

/** A delay as the Last HTTP response panel writes it: the exact whole number of seconds while a
 *  double holds it exactly (to 2^53), else as the step table writes seconds. */
function delayFigure(x) {
  return Number.isSafeInteger(x) ? `${x}` : seconds(x);
}

/** "a" or "an" before a figure, as it is read aloud: "an" where it begins with eight, eleven or
 *  eighteen (8, 80, 8.5, 11, 18, 11000, 8.00e+20), "a" for every other. */
export function article(figure) {
  const whole = figure.split(/[^0-9]/)[0];
  // The digits before the first thousands separator, as the figure is read.
  const lead = whole.slice(0, ((whole.length + 2) % 3) + 1);
  return whole.startsWith("8") || lead === "11" || lead === "18" ? "an" : "a";
}

/** How the model used a response's Retry-After, from the event it recorded right after the
 *  receipt (`next`: a wait, or the stop); empty while it has not decided yet. The page decides
 *  nothing here: it names the model's own wait source or stop cause. */
function use(next) {
  if (!next) return "";
  const source = next.event === "wait" ? next.source : next.cause?.source;
  const fallback = source === "fallback_missing" || source === "fallback_invalid";
  // A wait the budget could not fit was planned, then refused: the stop says so. The wait
  // alone may fit; what did not is the wait and the full attempt cap reserved after it.
  if (next.cause?.kind === "refused_wait") {
    const planned = fallback ? "the local fallback" : source === "ratelimit" ? "the RateLimit field's reading" : "its delay";
    return `; ${planned} and a full attempt after it would not fit in the budget, so no retry`;
  }
  if (fallback) return "; the local fallback applies";
  if (source === "ratelimit") return "; the RateLimit field's reading applies";
  switch (next.cause?.kind) {
    case "success": return " (not needed: the request succeeded)";
    case "not_retryable": return ` (not used: ${next.cause.status} is not retried)`;
    case "attempts_exhausted": return " (this action has no attempt left)";
    default: return "";
  }
}

/** The items a loaded body shows, as text: each item of an array body, or a body of any other
 *  shape as one item, objects written out as JSON, so that a success never reads as "nothing
 *  loaded". */
export function listItems(body) {
  const items = Array.isArray(body) ? body : body == null ? [] : [body];
  return items.map((item) => (typeof item === "object" ? JSON.stringify(item) : String(item)));
}

/** The last receipt among a run's `events`, with the model's event after it (or undefined). */
export function lastReceipt(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].event === "receipt") return { receipt: events[i], next: events[i + 1] };
  }
  return { receipt: null, next: undefined };
}

/** What the Last HTTP response panel says of a receipt (a `receipt` event), given the model's
 *  event after it (`next`): its status, its Retry-After raw and as read (and how the model used
 *  it), and its RateLimit field raw and as read (when the policy reads it). */
export function lastResponse(receipt, next) {
  if (!receipt) return { status: "none yet", raw: "-", reading: "-", ratelimit: "-" };
  const ra = receipt.retry_after;
  const kinds = {
    seconds: "delay-seconds",
    date: "an HTTP-date",
    // A cross-origin response that does not list Retry-After in Access-Control-Expose-Headers
    // hides it from the page, and a hidden header reads exactly like an absent one.
    missing: "unavailable: the response had no Retry-After, or it was hidden from this page (a cross-origin response that does not expose it)",
    invalid: "invalid",
  };
  const figure = ra.delay_s === null ? null : delayFigure(ra.delay_s);
  const delay = figure === null ? "" : `, ${article(figure)} ${figure}-second delay`;
  const rl = receipt.ratelimit;
  const rlReading = rl && (rl.reset_s === null ? rl.kind : `${rl.kind}: the quota is restored in ${seconds(rl.reset_s)} s`);
  return {
    status: String(receipt.status),
    raw: ra.raw === null ? "(absent)" : JSON.stringify(ra.raw),
    reading: `${kinds[ra.kind] ?? ra.kind}${delay}${use(next)}`,
    ratelimit: rl ? `${JSON.stringify(rl.raw)}, read as ${rlReading}` : "(not read, or absent)",
  };
}
