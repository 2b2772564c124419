// A study's page: the trials table sorted by a column (click its name; again: the other way) and filtered (text in
// any column); the parallel coordinates of the finished trials and each parameter's importance
// (/api/studies/ID); cancel the study (after a confirmation); the plot drawn again each time the trials change.
// A plot the server cannot draw (no matplotlib: tfcloud[tune]) is replaced by its reason, as text. Everything
// from data is set as text or as SVG attributes, never as HTML.
import { fetchText, token } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const trials = document.getElementById("trials");
const filter = document.getElementById("trial-filter");
const count = document.getElementById("trial-count");
const cancelButton = document.getElementById("cancel-study");
const action = document.getElementById("study-action");
const parallel = document.getElementById("parallel");
const importance = document.getElementById("importance");
const previous = document.getElementById("trials-newer");
const next = document.getElementById("trials-older");
let sortColumn = null, sortDescending = false, page = 0;

// -- the table: sort and filter (again after each refresh of the table) ------------------------------------
function value(cell, numeric) {
  const raw = cell.dataset.v !== undefined ? cell.dataset.v : cell.textContent.trim();
  if (!numeric) return raw.toLowerCase();
  const number = Number(raw);
  return raw === "" || Number.isNaN(number) ? null : number;
}

function arrange() {
  const table = document.getElementById("trials-table");
  if (!table) return;
  const headers = [...table.tHead.rows[0].cells];
  headers.forEach((th, i) => {
    th.classList.add("sortable");
    th.setAttribute("aria-sort", i === sortColumn ? (sortDescending ? "descending" : "ascending") : "none");
  });
  const body = table.tBodies[0];
  const rows = [...body.rows];
  if (sortColumn !== null) {
    const numeric = headers[sortColumn].dataset.type === "num";
    rows.sort((a, b) => {
      const x = value(a.cells[sortColumn], numeric), y = value(b.cells[sortColumn], numeric);
      if (x === y) return 0;
      if (x === null) return 1;  // rows without a value last, either way
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (sortDescending ? -1 : 1);
    });
    body.append(...rows);
  }
  const wanted = filter.value.trim().toLowerCase();
  const matching = rows.filter((row) => !wanted || row.textContent.toLowerCase().includes(wanted));
  const size = Number(trials.dataset.pageSize || 50);  // trials a page
  const pages = Math.max(1, Math.ceil(matching.length / size));
  page = Math.min(page, pages - 1);
  const shown = new Set(matching.slice(page * size, (page + 1) * size));
  for (const row of rows) row.hidden = !shown.has(row);
  count.textContent = (wanted ? `${matching.length} of ${rows.length} trials` : `${rows.length} trials`) +
    (pages > 1 ? ` · page ${page + 1} of ${pages}` : "");
  previous.hidden = next.hidden = pages <= 1;
  previous.disabled = page === 0;
  next.disabled = page >= pages - 1;
}

previous.addEventListener("click", () => { page -= 1; arrange(); });
next.addEventListener("click", () => { page += 1; arrange(); });

trials.addEventListener("click", (event) => {
  const th = event.target.closest("#trials-table th");
  if (!th) return;
  const column = th.cellIndex;
  sortDescending = sortColumn === column ? !sortDescending : false;
  sortColumn = column;
  arrange();
});
filter.addEventListener("input", () => { page = 0; arrange(); });
trials.addEventListener("tfcloud:refreshed", arrange);
arrange();

// -- parallel coordinates and importance -------------------------------------------------------------------
function svg(name, attributes) {
  const element = document.createElementNS(SVG, name);
  for (const [key, val] of Object.entries(attributes)) element.setAttribute(key, String(val));
  return element;
}

function drawParallel(study) {
  const done = study.trials.filter((t) => t.metric !== null);
  parallel.replaceChildren();
  if (!done.length) {
    const p = document.createElement("p");
    p.className = "dim";
    p.textContent = "No finished trial yet.";
    parallel.append(p);
    return;
  }
  const axes = [...study.axes.map((a) => ({ ...a, get: (t) => t.positions[a.name] })),
    { name: study.metric, kind: "metric", get: (t) => t.metric }];
  const W = Math.max(360, 120 * axes.length), H = 240, TOP = 24, BOTTOM = 28, LEFT = 40, RIGHT = 40;
  const x = (i) => LEFT + (axes.length > 1 ? i / (axes.length - 1) : 0.5) * (W - LEFT - RIGHT);
  const ranges = axes.map((axis) => {
    if (axis.kind === "categorical") return [0, Math.max(1, axis.values.length - 1)];
    const values = done.map(axis.get).filter((v) => v !== null);
    return [Math.min(...values), Math.max(...values)];
  });
  const y = (i, v) => {
    const [lo, hi] = ranges[i];
    return H - BOTTOM - (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (H - TOP - BOTTOM);
  };
  const drawing = svg("svg", { viewBox: `0 0 ${W} ${H}`, id: "parallel-plot", role: "img",
    "aria-label": `parallel coordinates of ${done.length} trials` });
  drawing.style.width = `${W}px`;
  axes.forEach((axis, i) => {
    drawing.append(svg("line", { x1: x(i), y1: TOP, x2: x(i), y2: H - BOTTOM, class: "axis" }));
    const name = svg("text", { x: x(i), y: TOP - 8, class: "tick middle axis-name" });
    name.textContent = axis.name + (axis.log ? " (log)" : "");
    drawing.append(name);
    const ticks = axis.kind === "categorical" ? axis.values.map((v, k) => [k, v])
      : [[ranges[i][0], null], [ranges[i][1], null]];
    for (const [position, text] of ticks) {
      const label = svg("text", { x: x(i) + 4, y: y(i, position) + 3, class: "tick" });
      label.textContent = text !== null ? text
        : (axis.log ? Number((10 ** position).toPrecision(3)) : Number(position.toPrecision(3))).toString();
      drawing.append(label);
    }
  });
  const metrics = done.map((t) => t.metric);
  const [m0, m1] = [Math.min(...metrics), Math.max(...metrics)];
  for (const trial of done) {
    const good = m1 > m0 ? (trial.metric - m0) / (m1 - m0) : 0.5;
    const quality = study.goal === "minimize" ? 1 - good : good;
    const points = [];
    axes.forEach((axis, i) => {
      const v = axis.get(trial);
      if (v !== null && v !== undefined) points.push(`${x(i).toFixed(1)},${y(i, v).toFixed(1)}`);
    });
    const line = svg("polyline", { points: points.join(" "), fill: "none",
      stroke: `hsl(${Math.round(220 - 200 * quality)}, 70%, 45%)`, "stroke-width": trial.best ? 3 : 1.4,
      class: "trial" + (trial.best ? " best" : "") });
    line.dataset.trial = trial.id;
    const title = svg("title", {});
    title.textContent = `trial ${trial.id}: ${study.metric} ${trial.metric}`;
    line.append(title);
    drawing.append(line);
  }
  parallel.append(drawing);
}

function drawImportance(study) {
  importance.replaceChildren();
  if (!study.importance.length) {
    const p = document.createElement("p");
    p.className = "dim";
    p.textContent = "Too few finished trials to say (4 or more are needed).";
    importance.append(p);
    return;
  }
  const table = document.createElement("table");
  table.className = "grid";
  table.id = "importance-table";
  for (const row of study.importance) {
    const tr = table.insertRow();
    tr.dataset.param = row.name;
    tr.insertCell().textContent = row.name;
    const bar = tr.insertCell();
    const meter = document.createElement("meter");
    meter.min = 0; meter.max = 1; meter.value = row.share;
    bar.append(meter);
    const share = tr.insertCell();
    share.className = "num";
    share.textContent = `${(row.share * 100).toFixed(0)}%`;
  }
  importance.append(table);
}

async function explore() {
  let final = false;
  try {
    const response = await fetch(parallel.dataset.src, { credentials: "same-origin", cache: "no-store" });
    const study = await response.json();
    if (!response.ok) throw new Error(study.error);
    drawParallel(study);
    drawImportance(study);
    final = study.final;
    if (final) cancelButton.disabled = true;
  } catch (error) {
    parallel.textContent = `Could not load the trials: ${error.message}`;
  }
  if (!final) setTimeout(explore, 2000);
}
explore();

// -- cancel ------------------------------------------------------------------------------------------------
cancelButton.addEventListener("click", async () => {
  if (!window.confirm(`Cancel ${cancelButton.dataset.study}? Its running trials are stopped.`)) return;
  cancelButton.disabled = true;
  const response = await fetch(`/api/studies/${encodeURIComponent(cancelButton.dataset.study)}/cancel`, {
    method: "POST", credentials: "same-origin", headers: { "X-Tfcloud-Token": token },
  });
  const body = await response.json();
  action.textContent = response.ok ? `cancel requested (${body.state})` : `cancel failed: ${body.error}`;
  if (!response.ok) cancelButton.disabled = false;
});

// -- the plot ----------------------------------------------------------------------------------------------
const plot = document.getElementById("plot");
const source = plot.getAttribute("src");

async function explain() {
  const note = document.createElement("p");
  note.className = "dim";
  note.id = "plot-problem";
  try {
    await fetchText(source);
    note.textContent = "The plot could not be shown.";
  } catch (error) {
    note.textContent = `No plot: ${error.message.replace(/^\d+ /, "")}`;
  }
  plot.replaceWith(note);
}

plot.addEventListener("error", explain);
if (plot.complete && plot.naturalWidth === 0) explain();  // it failed before this script ran

trials.addEventListener("tfcloud:refreshed", () => {
  if (document.body.contains(plot)) plot.src = `${source}?at=${Date.now()}`;
});
