// A study's page: the plot is drawn again each time the trials table changes (while the study runs); a plot the
// server cannot draw (no matplotlib: tfcloud[tune]) is replaced by its reason, as text.
import { fetchText } from "./ui.js";

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

document.getElementById("trials").addEventListener("tfcloud:refreshed", () => {
  if (document.body.contains(plot)) plot.src = `${source}?at=${Date.now()}`;
});
