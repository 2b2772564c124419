// A job's page: its log lines as they come (server-sent events from /api/jobs/ID/logs), each with its replica's
// prefix and colour as in the terminal, a line several replicas print alike once (fold); TensorFlow's start-up
// noise hidden unless "Show everything" is on; one replica or all; cancel (after a confirmation). Each line is
// set as text (textContent), never as HTML.
import { load, token } from "./ui.js";

const log = document.getElementById("log");
const showAll = document.getElementById("show-all");
const replicaFilter = document.getElementById("replica");
const hiddenCount = document.getElementById("hidden-count");
const logState = document.getElementById("log-state");
const cancelButton = document.getElementById("cancel");
let width = Number(log.dataset.width || 0);
let hidden = 0;
const replicaClasses = new Map();
document.querySelectorAll(".replicas li > span:first-child").forEach((span) => {
  replicaClasses.set(span.textContent, span.className);
});

function nearBottom() {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

// Several replicas printing the same line within a second show it once, its prefix saying how many, as in the
// terminal (lines that differ are never folded; each replica's own lines keep their order).
const FOLD_S = 1.0;
const recent = new Map(); // text -> {row, prefix, replicas, t, seq, n}: rows that may still fold a replica in
const lastSeq = new Map(); // replica and stream -> the seq of the row its last line went to
let seq = 0;
if (replicaClasses.size > 1) width = Math.max(width, `${replicaClasses.size} replicas`.length);

function fold(line) {
  const key = `${line.r}\u0000${line.s}`;
  const found = recent.get(line.x);
  const t = line.t ?? 0;
  if (!found || found.replicas.has(line.r) || found.n !== Boolean(line.n) || found.seq <= (lastSeq.get(key) ?? -1)
      || Math.abs(t - found.t) > FOLD_S) {
    return false;
  }
  found.replicas.add(line.r);
  found.row.dataset.replica = [...found.replicas].join(" ");
  const label = `${found.replicas.size} replicas`;
  width = Math.max(width, label.length);
  found.prefix.className = "prefix c-white folded";
  found.prefix.textContent = label.padEnd(width) + " | ";
  lastSeq.set(key, found.seq);
  return true;
}

function addLines(lines) {
  const follow = nearBottom();
  const fragment = document.createDocumentFragment();
  for (const line of lines) {
    if (fold(line)) continue;
    width = Math.max(width, line.r.length);
    const row = document.createElement("div");
    row.className = "line" + (line.n ? " noise" : "") + (line.s === "stderr" ? " stderr" : "");
    row.dataset.replica = line.r;
    const prefix = document.createElement("span");
    prefix.className = "prefix " + (replicaClasses.get(line.r) || "c-white");
    prefix.textContent = line.r.padEnd(width) + " | ";
    const text = document.createElement("span");
    text.className = "text";
    text.textContent = line.x;
    row.append(prefix, text);
    fragment.append(row);
    if (line.n) hidden += 1;
    seq += 1;
    recent.set(line.x, { row, prefix, replicas: new Set([line.r]), t: line.t ?? 0, seq, n: Boolean(line.n) });
    lastSeq.set(`${line.r}\u0000${line.s}`, seq);
  }
  for (const [text, entry] of recent) { // keep only what a line to come may still fold into
    if (seq - entry.seq > 500) recent.delete(text);
  }
  log.append(fragment);
  hiddenCount.textContent = hidden ? `${hidden} start-up line${hidden === 1 ? "" : "s"} hidden` : "";
  if (follow) log.scrollTop = log.scrollHeight;
}

function applyFilters() {
  log.classList.toggle("show-all", showAll.checked);
  hiddenCount.hidden = showAll.checked;
  const only = replicaFilter.value;
  let style = document.getElementById("replica-style");
  if (!style) {
    style = document.createElement("style");
    style.id = "replica-style";
    document.head.append(style);
  }
  style.textContent = only ? `#log .line:not([data-replica~="${CSS.escape(only)}"]) { display: none; }` : "";
}

showAll.addEventListener("change", applyFilters);
replicaFilter.addEventListener("change", applyFilters);

const source = new EventSource(log.dataset.src);
source.addEventListener("open", () => { logState.textContent = "following"; });
source.addEventListener("lines", (event) => addLines(JSON.parse(event.data)));
source.addEventListener("end", (event) => {
  logState.textContent = `the job ${JSON.parse(event.data).state}: every line is in`;
  source.close();
});
source.addEventListener("problem", (event) => {
  logState.textContent = `logs stopped: ${JSON.parse(event.data).message}`;
  source.close();
});
source.addEventListener("error", () => {
  if (source.readyState === EventSource.CLOSED) logState.textContent = "disconnected";
});

cancelButton.addEventListener("click", async () => {
  if (!window.confirm(`Cancel ${cancelButton.dataset.job}? Its replicas are stopped.`)) return;
  cancelButton.disabled = true;
  const response = await fetch(`/api/jobs/${encodeURIComponent(cancelButton.dataset.job)}/cancel`, {
    method: "POST", credentials: "same-origin", headers: { "X-Tfcloud-Token": token },
  });
  const body = await response.json();
  logState.textContent = response.ok ? `cancel requested (${body.state})` : `cancel failed: ${body.error}`;
  if (!response.ok) cancelButton.disabled = false;
});

document.addEventListener("tfcloud:final", () => {
  cancelButton.disabled = true;
  const artifacts = document.getElementById("artifacts");
  if (artifacts && !artifacts.dataset.reloaded) {
    artifacts.dataset.reloaded = "yes";
    load(artifacts);
  }
});
