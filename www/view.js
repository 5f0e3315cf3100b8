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

/** Shows `lines` (the visible state) in `el`, one paragraph each. */
export function showLines(el, lines) {
  el.replaceChildren(...lines.map((line) => text("p", line)));
}

/** What the Last HTTP response panel says of a receipt (a report's `last_response` or a
 *  `receipt` event): its status, its Retry-After raw and as read, and its RateLimit field raw
 *  and as read (when the policy reads it). Facts only: the model's decision is elsewhere. */
export function lastResponse(receipt) {
  if (!receipt) return { status: "none yet", raw: "-", reading: "-", ratelimit: "-" };
  const ra = receipt.retry_after;
  const kinds = {
    seconds: "delay-seconds",
    date: "an HTTP-date",
    // A cross-origin response that does not list Retry-After in Access-Control-Expose-Headers
    // hides it from the page, and a hidden header reads exactly like an absent one.
    missing: "missing: the response had none, or it was hidden from this page",
    invalid: "invalid",
  };
  const delay = ra.delay_s === null ? "" : `, a ${seconds(ra.delay_s)}-second delay`;
  const rl = receipt.ratelimit;
  const rlReading = rl && (rl.reset_s === null ? rl.kind : `${rl.kind}: the quota is restored in ${seconds(rl.reset_s)} s`);
  return {
    status: String(receipt.status),
    raw: ra.raw === null ? "(absent)" : JSON.stringify(ra.raw),
    reading: `${kinds[ra.kind] ?? ra.kind}${delay}`,
    ratelimit: rl ? `${JSON.stringify(rl.raw)}, read as ${rlReading}` : "(not read, or absent)",
  };
}
