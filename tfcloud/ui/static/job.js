// A job's page: its log (server-sent events from /api/jobs/ID/logs): the last lines first, "Earlier lines" on
// demand, then new lines as they come; each with its replica's prefix and colour as in the terminal, ANSI colour
// codes drawn as colours, stderr marked; TensorFlow's start-up noise hidden unless "Show everything" is on; one
// replica or all; a line several replicas print alike (however late one starts) once, its prefix saying how many
// (as in the terminal); a search over the whole log; the whole log to download; cancel (after a confirmation). At most
// MAX_LINES lines are in the page (older ones leave it; "Earlier lines" brings them back). A reconnect resumes
// from the last line the page had (the browser sends its Last-Event-ID). Every line is set as text
// (textContent), never as HTML.
import { load, token } from "./ui.js";

const MAX_LINES = 5000;
const log = document.getElementById("log");
const showAll = document.getElementById("show-all");
const replicaFilter = document.getElementById("replica");
const hiddenCount = document.getElementById("hidden-count");
const logState = document.getElementById("log-state");
const cancelButton = document.getElementById("cancel");
const earlierButton = document.getElementById("earlier");
const jobPath = encodeURIComponent(log.dataset.job);
let width = Number(log.dataset.width || 0);
let hidden = 0;
let windowStart = null;  // the cursor where the first line in the page starts (0: the log's first line)
let done = false;
const replicaClasses = new Map();
document.querySelectorAll(".replicas li > span:first-child").forEach((span) => {
  replicaClasses.set(span.textContent, span.className);
});
const knownReplicas = new Set([...replicaFilter.options].map((o) => o.value).filter(Boolean));

function nearBottom() {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

// ANSI SGR codes (ESC [ ... m) as spans with classes; any other escape sequence is left out.
const ESCAPE = /\x1b\[([0-9;?]*)([ -\/]*[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
function ansi(text, into) {
  if (!text.includes("\x1b")) { into.textContent = text; return; }
  let classes = [];
  let last = 0;
  const push = (piece) => {
    if (!piece) return;
    const span = document.createElement("span");
    if (classes.length) span.className = classes.join(" ");
    span.textContent = piece;
    into.append(span);
  };
  for (const match of text.matchAll(ESCAPE)) {
    push(text.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[2] !== "m") continue;
    for (const code of (match[1] || "0").split(";").map(Number)) {
      if (code === 0) classes = [];
      else if (code === 1) classes.push("a-bold");
      else if (code === 2) classes.push("a-dim");
      else if (code === 3) classes.push("a-italic");
      else if (code === 4) classes.push("a-underline");
      else if (code === 39) classes = classes.filter((c) => !/^a-\d/.test(c));
      else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) {
        classes = classes.filter((c) => !/^a-\d/.test(c));
        classes.push(`a-${code}`);
      }
    }
  }
  push(text.slice(last));
}

function row(line) {
  width = Math.max(width, line.r.length);
  if (!knownReplicas.has(line.r)) {  // a replica the page did not know of (a Vertex AI pool's): a filter choice
    knownReplicas.add(line.r);
    replicaFilter.append(new Option(line.r, line.r));
  }
  const element = document.createElement("div");
  element.className = "line" + (line.n ? " noise" : "") + (line.s === "stderr" ? " stderr" : "");
  if (replicaFilter.value && replicaFilter.value !== line.r) element.classList.add("gone-filter");
  element.dataset.replica = line.r;
  if (line.s === "stderr") element.title = "stderr";
  const prefix = document.createElement("span");
  prefix.className = "prefix " + (replicaClasses.get(line.r) || "c-white");
  prefix.textContent = line.r.padEnd(width) + " | ";
  const text = document.createElement("span");
  text.className = "text";
  ansi(line.x, text);
  element.append(prefix, text);
  if (line.n) hidden += 1;
  return element;
}

function counts() {
  hiddenCount.textContent = hidden ? `${hidden} start-up line${hidden === 1 ? "" : "s"} hidden` : "";
}

// Several replicas printing a line alike show it once, the first replica's, its prefix saying how many, as in the
// terminal (tfcloud/view/logview.py fold_key): the same words, a word with a digit in it matching any such word (but a
// word naming the replica itself), however late a replica starts; lines that differ in a word are never folded,
// and each replica's own lines keep their order.
const FOLD_LINES = 1000; // as the terminal's window of lines (logview.FOLD_LINES)
// fold key -> [{element, prefix, replicas, seq, n}]: rows that may still fold a replica in, oldest first
const recent = new Map();

function foldKey(text, replica) {
  if (!/\d/.test(text)) return text;
  return text.split(" ").map((word) => (/\d/.test(word) && !word.includes(replica) ? "\u0000" : word)).join(" ");
}
const lastSeq = new Map(); // replica and stream -> the seq of the row its last line went to
let seq = 0;
if (replicaClasses.size > 1) width = Math.max(width, `${replicaClasses.size} replicas`.length);

function fold(line) {
  const key = `${line.r}\u0000${line.s}`;
  const after = lastSeq.get(key) ?? -1;
  const found = (recent.get(foldKey(line.x, line.r)) ?? []).find(
    (entry) => entry.seq > after && !entry.replicas.has(line.r) && entry.n === Boolean(line.n)
      && entry.element.parentNode !== null);
  if (!found) return false;
  found.replicas.add(line.r);
  found.element.dataset.replica = [...found.replicas].join(" ");
  const label = `${found.replicas.size} replicas`;
  width = Math.max(width, label.length);
  found.prefix.className = "prefix c-white folded";
  found.prefix.textContent = label.padEnd(width) + " | ";
  lastSeq.set(key, found.seq);
  return true;
}

function remember(line, element) {
  seq += 1;
  const key = foldKey(line.x, line.r);
  if (!recent.has(key)) recent.set(key, []);
  recent.get(key).push({ element, prefix: element.firstElementChild, replicas: new Set([line.r]), seq,
                         n: Boolean(line.n) });
  lastSeq.set(`${line.r}\u0000${line.s}`, seq);
}

function addLines(lines) {
  if (!lines.length) return;
  const follow = nearBottom();
  const fragment = document.createDocumentFragment();
  for (const line of lines) {
    if (fold(line)) continue;
    const element = row(line);
    remember(line, element);
    fragment.append(element);
  }
  for (const [key, entries] of recent) { // keep only what a line to come may still fold into (1,000 rows back)
    while (entries.length && seq - entries[0].seq > FOLD_LINES) entries.shift();
    if (!entries.length) recent.delete(key);
  }
  log.append(fragment);
  let extra = log.childElementCount - MAX_LINES;
  if (extra > 0) {
    while (extra-- > 0) log.firstElementChild.remove();
    windowStart = -1;  // lines left the page: "Earlier lines" reloads from the first one still there
    earlierButton.hidden = true;
  }
  counts();
  if (follow) log.scrollTop = log.scrollHeight;
}

async function addEarlier() {
  if (windowStart === null || windowStart <= 0) return;
  earlierButton.disabled = true;
  try {
    const response = await fetch(`/api/jobs/${jobPath}/logs/earlier?before=${windowStart}&n=2000`,
      { credentials: "same-origin", cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error);
    const height = log.scrollHeight;
    const fragment = document.createDocumentFragment();
    for (const line of body.lines) fragment.append(row(line));
    log.prepend(fragment);
    log.scrollTop += log.scrollHeight - height;  // the line that was at the top stays in view
    windowStart = body.start;
    counts();
  } catch (error) {
    logState.textContent = `earlier lines: ${error.message}`;
  }
  earlierButton.disabled = false;
  earlierButton.hidden = !(windowStart > 0);
}

function applyFilters() {
  log.classList.toggle("show-all", showAll.checked);
  hiddenCount.hidden = showAll.checked;
  const only = replicaFilter.value;
  for (const element of log.children) {
    element.classList.toggle("gone-filter", Boolean(only) && !element.dataset.replica.split(" ").includes(only));
  }
}

showAll.addEventListener("change", applyFilters);
replicaFilter.addEventListener("change", applyFilters);
earlierButton.addEventListener("click", addEarlier);

document.getElementById("log-search").addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = document.getElementById("search-text").value;
  const results = document.getElementById("search-results");
  results.hidden = false;
  results.replaceChildren();
  const head = document.createElement("p");
  head.id = "search-summary";
  results.append(head);
  if (!query.trim()) { results.hidden = true; return; }
  head.textContent = "searching…";
  try {
    const response = await fetch(`/api/jobs/${jobPath}/logs/search?q=${encodeURIComponent(query)}`,
      { credentials: "same-origin", cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error);
    head.textContent = `${body.count} line${body.count === 1 ? "" : "s"} hold "${query}"` +
      (body.count > body.lines.length ? ` (the first ${body.lines.length} shown)` : "");
    for (const line of body.lines) {
      const element = document.createElement("div");
      element.className = "line";
      const number = document.createElement("span");
      number.className = "num";
      number.textContent = `${line.line}: `;
      const text = document.createElement("span");
      text.textContent = `${line.r} | `;
      const body_ = document.createElement("span");
      ansi(line.x, body_);
      element.append(number, text, body_);
      results.append(element);
    }
  } catch (error) {
    head.textContent = `search failed: ${error.message}`;
  }
});

function setState(text, bad = false) {
  logState.textContent = text;
  logState.classList.toggle("bad", bad);
}

// What the stream brings is drawn in slices of at most 30 ms each, a timer's turn between them, so that a click
// or a scroll waits at worst for one slice, however many lines come at once (a long log's 2,000 last lines).
const SLICE_MS = 30;
const CHUNK = 200;
const queue = [];
let draining = false;

function drain() {
  const started = performance.now();
  while (queue.length && performance.now() - started < SLICE_MS) queue.shift()();
  if (queue.length) setTimeout(drain, 0);
  else draining = false;
}

function later(step) {
  queue.push(step);
  if (!draining) {
    draining = true;
    setTimeout(drain, 0);
  }
}

const source = new EventSource(log.dataset.src);
source.addEventListener("open", () => { if (!done) setState("following"); });
source.addEventListener("window", (event) => later(() => {
  const data = JSON.parse(event.data);
  if (data.start !== null && data.start !== undefined) {
    windowStart = data.start;
    earlierButton.hidden = !(windowStart > 0);
  }
}));
source.addEventListener("lines", (event) => {
  const lines = JSON.parse(event.data);
  for (let i = 0; i < lines.length; i += CHUNK) {
    const chunk = lines.slice(i, i + CHUNK);
    later(() => addLines(chunk));
  }
});
source.addEventListener("end", (event) => {
  done = true;
  source.close();
  later(() => setState(`the job ${JSON.parse(event.data).state}: every line is in`));
});
source.addEventListener("gone", (event) => {
  done = true;
  source.close();
  later(() => setState(`gone: ${JSON.parse(event.data).message}`, true));
});
source.addEventListener("problem", (event) => {
  done = true;
  source.close();
  later(() => setState(`logs stopped: ${JSON.parse(event.data).message}`, true));
});
source.addEventListener("error", () => {
  if (done) return;
  if (source.readyState === EventSource.CONNECTING) setState("disconnected: reconnecting…", true);
  else if (source.readyState === EventSource.CLOSED) setState("disconnected", true);
});

const rerunArgs = document.getElementById("rerun-args");
if (rerunArgs) {
  const command = document.getElementById("rerun-command");
  rerunArgs.addEventListener("input", () => {
    const args = rerunArgs.value.trim();
    command.textContent = command.dataset.head + (args ? ` -- ${args}` : "");
  });
}

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
