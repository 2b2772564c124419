// A job's charts: its training curves (the scalars in its TensorBoard log directory: /api/jobs/ID/curves, one
// chart per metric, by step) and its replicas' CPU and memory over time (/api/jobs/ID/resources, one line per
// replica). Fetched every 2 s while the job runs, once more when it ends. Drawn as SVG built with DOM calls
// (no HTML from data, no inline script or style: the page's content security policy allows neither).
const SVG = "http://www.w3.org/2000/svg";
const W = 360, H = 150, PAD = 34;
const COLOURS = ["#3b6fd8", "#2e9d4f", "#c0392b", "#a347ba", "#d98e04", "#1f9bb4", "#7f8c8d", "#e84393"];

function svg(name, attributes) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function format(value) {
  const size = Math.abs(value);
  if (size !== 0 && (size < 0.001 || size >= 100000)) return value.toExponential(2);
  return Number(value.toPrecision(4)).toString();
}

// One chart: lines = [{name, points: [[x, y], ...]}]; the caption says each line's last value.
export function chart(id, title, lines, { x = "step", y = format } = {}) {
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.id = id;
  const points = lines.flatMap((line) => line.points);
  figure.dataset.points = String(points.length);
  const caption = document.createElement("figcaption");
  const name = document.createElement("strong");
  name.textContent = title;
  caption.append(name);
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = (v) => PAD + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (W - PAD - 8);
  const sy = (v) => H - 18 - (y1 > y0 ? (v - y0) / (y1 - y0) : 0.5) * (H - 30);
  const drawing = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title });
  drawing.append(svg("line", { x1: PAD, y1: H - 18, x2: W - 8, y2: H - 18, class: "axis" }));
  drawing.append(svg("line", { x1: PAD, y1: 8, x2: PAD, y2: H - 18, class: "axis" }));
  const label = (text, attributes) => { const t = svg("text", attributes); t.textContent = text; drawing.append(t); };
  if (points.length) {
    label(y(y1), { x: PAD - 4, y: 14, class: "tick end" });
    label(y(y0), { x: PAD - 4, y: H - 20, class: "tick end" });
    label(`${x} ${format(x0)}`, { x: PAD, y: H - 4, class: "tick" });
    label(format(x1), { x: W - 8, y: H - 4, class: "tick end" });
  }
  lines.forEach((line, i) => {
    if (!line.points.length) return;
    const colour = COLOURS[i % COLOURS.length];
    const path = line.points.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    drawing.append(svg("polyline", { points: path, fill: "none", stroke: colour, "stroke-width": 1.6 }));
    const last = line.points[line.points.length - 1];
    drawing.append(svg("circle", { cx: sx(last[0]), cy: sy(last[1]), r: 2.5, fill: colour }));
    const value = document.createElement("span");
    value.className = "last";
    value.textContent = ` ${lines.length > 1 ? line.name + " " : ""}${y(last[1])}`;
    caption.append(value);
  });
  figure.append(drawing, caption);
  return figure;
}

async function json(url) {
  const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.status);
  return body;
}

function note(container, text) {
  const p = document.createElement("p");
  p.className = "dim";
  p.textContent = text;
  container.append(p);
}

function drawCurves(container, body) {
  const charts = document.createDocumentFragment();
  let step = null;
  for (const [name, points] of Object.entries(body.series)) {
    charts.append(chart(`curve-${name}`, name, [{ name, points: points.map((p) => [p[0], p[1]]) }]));
    for (const p of points) step = step === null ? p[0] : Math.max(step, p[0]);
  }
  container.replaceChildren(charts);
  const progress = document.getElementById("progress");
  progress.textContent = step === null ? "" : `step ${step}${body.final ? "" : " so far"}`;
  if (body.note) note(container, body.note);
}

const MIB = 1024 * 1024;
function drawResources(container, body) {
  const replicas = Object.entries(body.replicas);
  const start = Math.min(...replicas.flatMap(([, samples]) => samples.map((s) => s[0])));
  const lines = (column, scale) => replicas.map(([name, samples]) => (
    { name, points: samples.map((s) => [s[0] - start, s[column] / scale]) }));
  const charts = document.createDocumentFragment();
  if (replicas.some(([, samples]) => samples.length)) {
    charts.append(chart("cpu", "CPU (% of one core)", lines(1, 1), { x: "s", y: (v) => `${v.toFixed(0)}%` }));
    charts.append(chart("memory", "memory (resident)", lines(2, MIB), { x: "s", y: (v) => `${v.toFixed(0)} MiB` }));
  }
  container.replaceChildren(charts);
  if (body.note) note(container, body.note);
  else if (!replicas.some(([, samples]) => samples.length)) note(container, body.final
    ? "The job ended before its replicas were sampled." : "Sampling its replicas…");
}

function poll(container, url, draw) {
  const tick = async () => {
    let final = false;
    try {
      const body = await json(url);
      draw(container, body);
      final = body.final;
    } catch (error) {
      container.replaceChildren();
      note(container, `Could not load: ${error.message}`);
    }
    if (!final) setTimeout(tick, 2000);
  };
  tick();
}

const curves = document.getElementById("curves");
const resources = document.getElementById("resources");
if (curves) poll(curves, curves.dataset.src, drawCurves);
if (resources) poll(resources, resources.dataset.src, drawResources);
