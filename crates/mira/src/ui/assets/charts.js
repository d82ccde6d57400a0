// Pictures drawn as inline SVG: a memory's causal neighbourhood and an identity's drift.

import { s, h, when, num } from "./dom.js";

const NODE_W = 210;
const NODE_H = 46;
const GAP_X = 70;
const GAP_Y = 18;
const PAD = 12;

/** Cuts `text` to `n` characters, with an ellipsis when cut. */
function cut(text, n) {
  const t = String(text || "");
  return t.length > n ? t.slice(0, n - 1) + "…" : t;
}

/**
 * The causal neighbourhood of a memory (a `mira_causal_chain` answer with its consequences):
 * causes on the left, consequences on the right, one column per step, arrows from the older
 * memory (the cause) to the newer one. Each box links to its memory's page.
 */
export function causalGraph(chain) {
  const steps = [
    ...chain.causes.map((st) => ({ ...st, col: -st.depth })),
    ...(chain.consequences || []).map((st) => ({ ...st, col: st.depth })),
  ];
  if (!steps.length) return h("p", { class: "muted", id: "graph-empty" }, "No causal link recorded around this memory.");
  const columns = new Map([[0, [chain.start]]]);
  for (const st of steps) {
    if (!columns.has(st.col)) columns.set(st.col, []);
    columns.get(st.col).push(st.node);
  }
  const cols = [...columns.keys()].sort((a, b) => a - b);
  const rows = Math.max(...[...columns.values()].map((c) => c.length));
  const width = PAD * 2 + cols.length * NODE_W + (cols.length - 1) * GAP_X;
  const height = PAD * 2 + rows * NODE_H + (rows - 1) * GAP_Y;
  const at = new Map();
  cols.forEach((col, ci) => {
    const nodes = columns.get(col);
    const top = PAD + ((rows - nodes.length) * (NODE_H + GAP_Y)) / 2;
    nodes.forEach((n, ri) => at.set(n.id, { x: PAD + ci * (NODE_W + GAP_X), y: top + ri * (NODE_H + GAP_Y) }));
  });
  const edges = steps.map((st) => {
    const [from, to] = st.col < 0 ? [st.node.id, st.via] : [st.via, st.node.id];
    const a = at.get(from);
    const b = at.get(to);
    const [x1, y1, x2, y2] = [a.x + NODE_W, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2];
    return s("g", { class: "edge" },
      s("line", { x1, y1, x2: x2 - 2, y2, "marker-end": "url(#arrow)" }),
      s("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle" }, `${st.relation} ${num(st.confidence)}`),
      s("title", {}, `${st.relation}, confidence ${num(st.confidence)}`));
  });
  const nodes = [...columns.values()].flat().map((n) => {
    const { x, y } = at.get(n.id);
    const start = n.id === chain.start.id;
    return s("a", { href: "#/memory/" + encodeURIComponent(n.id), class: start ? "node start" : "node", "data-id": n.id },
      s("title", {}, n.summary),
      s("rect", { x, y, width: NODE_W, height: NODE_H, rx: 6 }),
      s("text", { x: x + 8, y: y + 18 }, cut(n.summary, 30)),
      s("text", { x: x + 8, y: y + 36, class: "sub" }, `${n.memory_type} · ${when(n.created_at).slice(0, 10)}`));
  });
  return s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `Causal neighbourhood: ${chain.causes.length} causes, ${(chain.consequences || []).length} consequences`, class: "causal" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z" }))),
    edges, nodes);
}

/**
 * An identity's versions, oldest first: a bar per version for its drift from the one before
 * (the dashed line is the threshold of a significant drift), and a line for the mean trait
 * confidence.
 */
export function driftChart(versions, threshold) {
  if (versions.length < 2) return h("p", { class: "muted" }, "One version so far: no drift to show.");
  const W = 640, H = 180, L = 40, R = 40, T = 14, B = 28;
  const step = (W - L - R) / versions.length;
  const top = Math.max(threshold * 1.5, ...versions.map((v) => v.drift || 0));
  const y = (f) => T + (1 - f) * (H - T - B);
  const bars = versions.map((v, i) => {
    const d = v.drift || 0;
    const yTop = y(d / top);
    return s("g", {},
      s("rect", { class: v.significant ? "bar significant" : "bar", x: L + i * step + step * 0.2, y: yTop, width: step * 0.6, height: H - B - yTop }),
      s("text", { class: "axis", x: L + i * step + step / 2, y: H - 10, "text-anchor": "middle" }, "v" + v.version),
      s("title", {}, `v${v.version}, ${when(new Date(v.created_at).toISOString())}, model ${v.model_id}: ` +
        (v.drift === null ? "first version shown" : `drift ${num(v.drift, 3)}`) + `, mean confidence ${num(v.confidence)} (${v.reason})`));
  });
  const points = versions.map((v, i) => `${L + i * step + step / 2},${y(v.confidence)}`).join(" ");
  return s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", class: "drift", id: "drift-chart",
    "aria-label": `Drift from the previous version (bars, threshold ${num(threshold, 2)}) and mean trait confidence (line), for ${versions.length} versions` },
    s("line", { class: "axis-line", x1: L, y1: H - B, x2: W - R, y2: H - B }),
    s("line", { class: "threshold", x1: L, y1: y(threshold / top), x2: W - R, y2: y(threshold / top) }),
    s("text", { class: "axis", x: 4, y: y(threshold / top) + 4 }, num(threshold, 2)),
    s("text", { class: "axis", x: W - R + 4, y: T + 8 }, "1.0"),
    s("text", { class: "axis", x: W - R + 4, y: H - B }, "0"),
    bars,
    s("polyline", { class: "confidence", points }),
    s("text", { class: "legend", x: L, y: T }, "bars: drift from the previous version · dashed: threshold · line: mean confidence"));
}
