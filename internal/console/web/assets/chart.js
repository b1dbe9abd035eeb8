// The Live page's rate chart: decisions per second (bars, 5-second buckets) and the share of them
// that were denied (line, 0–100 %), over the last five minutes, drawn as inline SVG.

import { svg } from "./format.js";
import { RATE_SECONDS } from "./store.js";

const BUCKET = 5;
const W = 600, H = 120, PAD_L = 34, PAD_R = 34, PAD_T = 8, PAD_B = 16;

// series sums the store's per-second counts into buckets, oldest first.
export function series(rates, nowSec = Math.floor(Date.now() / 1000)) {
  const n = RATE_SECONDS / BUCKET;
  const out = [];
  for (let i = n - 1; i >= 0; i--) {
    const end = nowSec - i * BUCKET;
    let d = 0, deny = 0;
    for (let s = end - BUCKET + 1; s <= end; s++) {
      const b = rates.get(s);
      if (b) { d += b.d; deny += b.deny; }
    }
    out.push({ rate: d / BUCKET, denyShare: d ? deny / d : null });
  }
  return out;
}

// render draws the chart into the svg element root (replacing what it held).
export function render(root, rates, nowSec) {
  const data = series(rates, nowSec);
  const max = Math.max(1, ...data.map((b) => b.rate));
  const top = niceCeil(max);
  const plotW = W - PAD_L - PAD_R, plotH = H - PAD_T - PAD_B;
  const bw = plotW / data.length;
  const y = (v) => PAD_T + plotH - (v / top) * plotH;
  const nodes = [
    svg("line", { class: "axis", x1: PAD_L, y1: PAD_T + plotH, x2: W - PAD_R, y2: PAD_T + plotH }),
    svg("text", { x: PAD_L - 4, y: PAD_T + 8, "text-anchor": "end" }, fmt(top) + "/s"),
    svg("text", { x: PAD_L - 4, y: PAD_T + plotH, "text-anchor": "end" }, "0"),
    svg("text", { x: W - PAD_R + 4, y: PAD_T + 8 }, "100%"),
    svg("text", { x: W - PAD_R + 4, y: PAD_T + plotH }, "0%"),
    svg("text", { x: PAD_L, y: H - 2 }, "−5 min"),
    svg("text", { x: W - PAD_R, y: H - 2, "text-anchor": "end" }, "now"),
  ];
  data.forEach((b, i) => {
    if (b.rate > 0) {
      nodes.push(svg("rect", { class: "bar", x: PAD_L + i * bw + 0.5, y: y(b.rate), width: Math.max(1, bw - 1), height: PAD_T + plotH - y(b.rate) }));
    }
  });
  const pts = [];
  data.forEach((b, i) => {
    if (b.denyShare !== null) pts.push((PAD_L + i * bw + bw / 2).toFixed(1) + "," + (PAD_T + plotH - b.denyShare * plotH).toFixed(1));
  });
  if (pts.length > 1) nodes.push(svg("polyline", { class: "deny", points: pts.join(" ") }));
  for (const p of pts) {
    const [cx, cy] = p.split(",");
    nodes.push(svg("circle", { class: "deny-dot", cx, cy, r: 2.5 }));
  }
  root.replaceChildren(...nodes);
  const last = data.slice(-12); // the last minute
  const dec = last.reduce((s, b) => s + b.rate * BUCKET, 0);
  const shares = last.filter((b) => b.denyShare !== null);
  const denied = last.reduce((s, b) => s + (b.denyShare || 0) * b.rate * BUCKET, 0);
  root.setAttribute("aria-label", "Decisions per second over the last five minutes; last minute: " +
    fmt(dec / 60) + " decisions per second, " + (dec ? Math.round((denied / dec) * 100) : 0) + "% denied" + (shares.length ? "" : " (no decisions)"));
}

function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(v) { return v >= 10 ? Math.round(v).toString() : v.toFixed(1).replace(/\.0$/, ""); }

export function viewBox() { return "0 0 " + W + " " + H; }
