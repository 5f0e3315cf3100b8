// SVG drawing shared by the page's timelines and the fleet chart.

export const SVG = "http://www.w3.org/2000/svg";

/** Appends a `tag` element with `attrs` (and text `content`, if any) to `parent`; returns it. */
export function addTo(parent, tag, attrs, content) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (content !== undefined) el.textContent = content;
  parent.append(el);
  return el;
}
