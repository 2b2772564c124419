"""Benchmark: the dashboard (``tfcloud ui``) in a real headless browser (Debian's chromium through selenium).

    python benchmarks/bench_ui.py [--rounds N] [--lines N] [--big N] [--quick]

- first paint: the jobs page and a job's page, each loaded ``--rounds`` times; the browser's own
  first-contentful-paint time (from the navigation's start) and when its DOM was complete;
- log latency: a running local job prints a line each time a file appears; the time from creating the file to
  the line being in the page (a MutationObserver notes when; the browser's and this process's clocks are the
  same machine's), ``--lines`` times;
- a big log (``--big`` lines, default 200,000, from a finished local job): the job page's first contentful paint,
  when its last line was in the page (from the navigation's start), and the longest main-thread stall while it
  loaded (the browser's own long-task entries: any task over 50 ms), ``--rounds`` times.

Prints the numbers (median, 90th percentile, max); asserts nothing about time. Needs tfcloud[ui], selenium and
Debian's chromium + chromium-driver (.ci/install-browser).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path

    triggers = Path(sys.argv[1])
    print("ready", flush=True)
    for i in range(int(sys.argv[2])):
        while not (triggers / str(i)).exists():
            time.sleep(0.005)
        print(f"line {i}", flush=True)
    time.sleep(600)
""")

OBSERVE = """
window.__seen = {};
new MutationObserver(() => {
  for (const row of document.querySelectorAll('#log .line .text')) {
    const m = /^line (\\d+)$/.exec(row.textContent);
    if (m && !(m[1] in window.__seen)) window.__seen[m[1]] = Date.now();
  }
}).observe(document.getElementById('log'), {childList: true});
"""


def _stats(name: str, values: list[float]) -> None:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    print(f"{name:<40} median {statistics.median(values) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   "
          f"max {max(values) * 1000:7.1f} ms   (n={len(values)})")


def _paint(driver: object, url: str) -> tuple[float, float]:
    driver.get(url)  # type: ignore[attr-defined]
    for _ in range(200):
        found = driver.execute_script(  # type: ignore[attr-defined]
            "const p = performance.getEntriesByName('first-contentful-paint')[0];"
            "const n = performance.getEntriesByType('navigation')[0];"
            "return p && n && n.domComplete ? [p.startTime, n.domComplete] : null;")
        if found:
            return found[0] / 1000, found[1] / 1000
        time.sleep(0.01)
    raise SystemExit(f"no first paint for {url}")


BIG = textwrap.dedent("""
    import sys
    for i in range(int(sys.argv[1])):
        print(f"line {i} " + "x" * (i % 60))
    print("the last line", flush=True)
""")

LONGEST_STALL = """
const done = arguments[arguments.length - 1];
new PerformanceObserver((list, observer) => {
  observer.disconnect();
  done(Math.max(0, ...list.getEntries().map((e) => e.duration)));
}).observe({type: "longtask", buffered: true});
setTimeout(() => done(0), 500);  // no long task at all: no entries come
"""


def _big_log(driver: object, url: str) -> tuple[float, float, float]:
    driver.get(url)  # type: ignore[attr-defined]
    for _ in range(3000):
        found = driver.execute_script(  # type: ignore[attr-defined]
            "const l = document.getElementById('log');"
            "const last = l && l.lastElementChild;"
            "if (!last || !last.textContent.endsWith('the last line')) return null;"
            "const p = performance.getEntriesByName('first-contentful-paint')[0];"
            "return [p ? p.startTime : -1, performance.now()];")
        if found:
            break
        time.sleep(0.01)
    else:
        raise SystemExit(f"the big log's last line never showed at {url}")
    time.sleep(0.3)
    stall = driver.execute_async_script(LONGEST_STALL)  # type: ignore[attr-defined]
    return found[0] / 1000, found[1] / 1000, float(stall) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=20)
    parser.add_argument("--big", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true", help="one round, three lines, a 2,000-line log")
    options = parser.parse_args()
    if options.quick:
        options.rounds, options.lines, options.big = 1, 3, 2_000

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    import tfcloud

    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-ui-") as tmp:
        root = Path(tmp)
        os.environ["TFCLOUD_HOME"] = str(root / "home")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        proc = subprocess.Popen([sys.executable, "-m", "tfcloud.cli", "-q", "ui", "--port", "0", "--no-browser",
                                 "--target", "local"], stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        base = url.split("/?", 1)[0]
        (root / "triggers").mkdir()
        (root / "live.py").write_text(SCRIPT)
        job = tfcloud.submit(root / "live.py", distribution_strategy=None,
                             entry_point_args=[str(root / "triggers"), str(options.lines)])
        (root / "big.py").write_text(BIG)
        big = tfcloud.submit(root / "big.py", distribution_strategy=None, entry_point_args=[str(options.big)])
        big.wait(600)
        browser_options = webdriver.ChromeOptions()
        browser_options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    "--window-size=1280,900", "--no-proxy-server"):
            browser_options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=browser_options)
        try:
            driver.get(url)  # the token becomes a cookie
            print(f"tfcloud ui at {base}; chromium {driver.capabilities.get('browserVersion')}")
            for name, page in (("jobs page", "/"), ("job page", f"/jobs/{job.job_id}")):
                paints, complete = [], []
                for _ in range(options.rounds):
                    fcp, dom = _paint(driver, base + page)
                    paints.append(fcp)
                    complete.append(dom)
                _stats(f"{name}: first contentful paint", paints)
                _stats(f"{name}: DOM complete", complete)

            driver.get(f"{base}/jobs/{job.job_id}")
            for _ in range(500):
                if "ready" in driver.find_element("id", "log").text:
                    break
                time.sleep(0.01)
            driver.execute_script(OBSERVE)
            latencies = []
            for i in range(options.lines):
                written = time.time()
                (root / "triggers" / str(i)).touch()
                for _ in range(1000):
                    seen = driver.execute_script(f"return window.__seen['{i}'] || null;")
                    if seen:
                        break
                    time.sleep(0.005)
                else:
                    raise SystemExit(f"line {i} never showed")
                latencies.append(max(0.0, seen / 1000 - written))
                time.sleep(0.1)
            _stats("log line: file created -> in the page", latencies)

            paints, last, stalls = [], [], []
            for _ in range(options.rounds):
                fcp, shown, stall = _big_log(driver, f"{base}/jobs/{big.job_id}")
                paints.append(fcp)
                last.append(shown)
                stalls.append(stall)
            _stats(f"{options.big}-line log: first contentful paint", paints)
            _stats(f"{options.big}-line log: its last line in the page", last)
            _stats(f"{options.big}-line log: longest main-thread stall", stalls)
        finally:
            driver.quit()
            job.cancel()
            job.wait(60)
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
