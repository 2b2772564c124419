// Shared by every page: parts that refresh themselves from the server (data-refresh, every data-every ms,
// until the part says data-final="yes" when data-until-final is set), parts loaded once (data-load), and copy
// buttons (data-copy: the id of the element whose text is copied). The server renders every fragment with its
// text escaped; nothing here builds HTML from data.

export const token = document.querySelector('meta[name="tfcloud-token"]').content;

export async function fetchText(url) {
  const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response.text();
}

function isFinal(element) {
  return element.querySelector('[data-final="yes"]') !== null;
}

function refresh(element) {
  const every = Number(element.dataset.every || 2000);
  const untilFinal = element.hasAttribute("data-until-final");
  let last = null;
  const tick = async () => {
    if (untilFinal && isFinal(element)) {
      element.dispatchEvent(new CustomEvent("tfcloud:final", { bubbles: true }));
      return;
    }
    try {
      const html = await fetchText(element.dataset.refresh);
      if (html !== last) {
        last = html;
        element.innerHTML = html;
        element.dispatchEvent(new CustomEvent("tfcloud:refreshed", { bubbles: true }));
      }
      element.classList.remove("stale");
    } catch (error) {
      element.classList.add("stale");
    }
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}

export async function load(element) {
  try {
    element.innerHTML = await fetchText(element.dataset.load);
  } catch (error) {
    element.textContent = `Could not load: ${error.message}`;
  }
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const text = document.getElementById(button.dataset.copy).textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch (error) {  // no clipboard API (a plain-http address other than localhost): select the text instead
    const range = document.createRange();
    range.selectNodeContents(document.getElementById(button.dataset.copy));
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    document.execCommand("copy");
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
});

document.querySelectorAll("[data-refresh]").forEach(refresh);
document.querySelectorAll("[data-load]").forEach(load);
