// Building the page: elements are made with createElement and text is always set as text
// (textContent / text nodes), never parsed as HTML, so that memories render as they are.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") el.textContent = String(v);
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** An HTML element: h("a", {href: "#/"}, "text", child…). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replaces the children of `el`. */
export function put(el, ...children) {
  el.replaceChildren();
  return fill(el, {}, children);
}

/** "2024-03-01 14:05" from an RFC 3339 time (UTC, as mira prints it). */
export function when(t) {
  return t ? String(t).replace("T", " ").slice(0, 16) : "";
}

/** The first 8 hex digits of an id, as the context block prints it. */
export function short(id) {
  return String(id || "").replace(/-/g, "").slice(0, 8);
}

/** A link to a memory's page. */
export function memoryLink(id, label) {
  return h("a", { href: "#/memory/" + encodeURIComponent(id), dataset: { id } }, label || short(id));
}

/** A number with at most `digits` decimals. */
export function num(x, digits = 2) {
  return Number(x || 0).toLocaleString("en", { maximumFractionDigits: digits });
}

/** A labelled form field. */
export function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), input, hint ? h("small", { class: "muted" }, hint) : null);
}

/** A <select> of `options` ([value, label] or value), `current` selected. */
export function select(attrs, options, current) {
  return h("select", attrs, options.map((o) => {
    const [value, label] = Array.isArray(o) ? o : [o, o];
    return h("option", { value, selected: value === (current ?? "") }, label);
  }));
}
