"""``tfcloud ui`` in a real headless browser: one dashboard process on loopback (module-scoped) over a state dir of
its own and the Vertex AI emulator (process replicas); real local jobs, a real Vertex AI job on the emulator and a
real local study, all made through the SDK or the emulator's own client."""

from __future__ import annotations

import os
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.conftest import Served, screenshot, start_ui, stop_ui

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI jobs need tfcloud[cloud]")

pytestmark = pytest.mark.emulator

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tfcloud_emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("ui-home")
    env = {key: value for key, value in os.environ.items() if not key.startswith("TFCLOUD_")}
    env.update(tfcloud_emulator.settings.env)
    env.update({"TFCLOUD_HOME": str(home), "TFCLOUD_PROJECT": tfcloud_emulator.project,
                "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])})
    proc, url = start_ui(env, "--token", TOKEN)
    try:
        yield Served(base=url.split("/?", 1)[0], token=TOKEN, home=home, process=proc)
    finally:
        stop_ui(proc)


@pytest.fixture(scope="module")
def browser(browser: Any, served: Served) -> Any:
    """The module's browser, signed in to the dashboard (the token's cookie set), whichever test runs first."""
    browser.get(served.url)
    assert browser.current_url == served.base + "/"  # the token went into a cookie, out of the address bar
    return browser


@pytest.fixture(autouse=True)
def _same_home(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_HOME", str(served.home))  # this process's jobs are the dashboard's


def _wait(driver: Any, condition: Any, timeout: float = 30.0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def _text(driver: Any, element_id: str) -> str:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    try:
        return str(driver.find_element("id", element_id).text)
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def _submit(tmp_path: Path, name: str, code: str, **options: Any) -> Any:
    import tfcloud

    script = tmp_path / name
    script.write_text(textwrap.dedent(code))
    return tfcloud.submit(script, distribution_strategy=None, **options)


def _row_state(driver: Any, job_id: str) -> str:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    try:
        row = driver.find_element("css selector", f'tr[data-job="{job_id}"]')
        return str(row.find_element("css selector", ".state").text)
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def test_the_jobs_list_shows_local_and_vertex_jobs_with_their_states(served: Served, browser: Any,
                                                                     tfcloud_emulator: Any, tmp_path: Path) -> None:
    from google.cloud import aiplatform_v1 as vertex
    from selenium.webdriver.support.select import Select

    local = _submit(tmp_path, "hello.py", "print('hello')\n")
    failing = _submit(tmp_path, "broken.py", "print('about to fail')\nraise SystemExit(3)\n")
    pool = vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                 container_spec=vertex.ContainerSpec(image_uri="us-docker.pkg.dev/p/r/train:1",
                                                                     command=[sys.executable, "-c", "print('hi')"]))
    client = tfcloud_emulator.job_client()
    try:
        created = client.create_custom_job(parent=tfcloud_emulator.parent, custom_job=vertex.CustomJob(
            display_name="vertex-hello", labels={"team": "vision"},
            job_spec=vertex.CustomJobSpec(worker_pool_specs=[pool])))
    finally:
        client.transport.close()
    vertex_id = created.name.rsplit("/", 1)[1]
    local.wait(60)
    failing.wait(60)

    browser.get(served.url)
    # The list refreshes itself: the Vertex AI job reaches succeeded without a reload.
    _wait(browser, lambda d: _row_state(d, vertex_id) == "succeeded")
    assert _row_state(browser, local.job_id) == "succeeded"
    assert _row_state(browser, failing.job_id) == "failed"
    rows = [r.get_attribute("data-job") for r in browser.find_elements("css selector", "#jobs-table tbody tr")]
    assert rows.index(failing.job_id) < rows.index(local.job_id)  # newest first
    assert "team=vision" in browser.find_element("css selector", f'tr[data-job="{vertex_id}"]').text
    # The cost column (sdk.cost_of): the Vertex AI job priced from the table, the local one not billed by Google.
    assert browser.find_element("css selector", f'tr[data-job="{vertex_id}"] .cost').text.startswith("$")
    assert browser.find_element("css selector", f'tr[data-job="{local.job_id}"] .cost').text == "not billed"
    screenshot(browser, "ui-jobs")

    browser.get(served.base + "/?label=team%3Dvision")
    _wait(browser, lambda d: _row_state(d, vertex_id) == "succeeded")
    assert _row_state(browser, local.job_id) == ""
    browser.get(served.base + "/?target=local&state=failed")
    _wait(browser, lambda d: _row_state(d, failing.job_id) == "failed")
    assert _row_state(browser, local.job_id) == _row_state(browser, vertex_id) == ""

    browser.get(f"{served.base}/jobs/{failing.job_id}")
    _wait(browser, lambda d: "about to fail" in _text(d, "log"))
    assert _text(browser, "exit-code") == "exit code 3"
    assert _text(browser, "failed-replica") == "failing replica: chief-0"
    assert "about to fail" in _text(browser, "failure")
    assert not browser.find_element("id", "cancel").is_enabled()  # a final job cannot be cancelled

    browser.get(f"{served.base}/jobs/{vertex_id}")
    _wait(browser, lambda d: "hi" in _text(d, "log"))
    assert _text(browser, "job-state") == "succeeded"
    # Vertex AI reports no replicas: the replica filter offers those its log lines came from (and the service's).
    options = [o.get_attribute("value") for o in browser.find_elements("css selector", "#replica option")]
    assert options[0] == "" and "chief-0" in options
    Select(browser.find_element("id", "replica")).select_by_value("chief-0")
    shown = [line.text for line in browser.find_elements("css selector", "#log .line") if line.is_displayed()]
    assert shown and all(line.startswith("chief-0") for line in shown)
    # Pages of one Vertex AI job share one follower of its log: a reload shows each line once.
    browser.get(f"{served.base}/jobs/{vertex_id}")
    _wait(browser, lambda d: "every line is in" in _text(d, "log-state"))
    texts = browser.execute_script("return [...document.querySelectorAll('#log .line .text')].map(e => e.textContent)")
    assert texts.count("hi") == 1
    assert _text(browser, "plan") == "Submitted from another machine: only what the job itself reports."


LIVE_SCRIPT = """
import os, sys, time
from pathlib import Path

print("<b>bold?</b> <script>document.title = 'owned'</script> & done", flush=True)
print("I0000 00:00:1795431374.452381    5161 cpu_feature_guard.cc:210] start-up noise", flush=True)
trigger = Path(sys.argv[1])
while not trigger.exists():
    time.sleep(0.01)
print("the trigger appeared", flush=True)
time.sleep(600)
"""


def test_a_running_job_streams_new_lines_shows_html_as_text_and_cancels_from_the_page(
        served: Served, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support import expected_conditions

    trigger = tmp_path / "trigger"
    data = tmp_path / "set"
    data.mkdir()
    job = _submit(tmp_path, "live.py", LIVE_SCRIPT, entry_point_args=[str(trigger)], env={"MODE": "fast"},
                  secrets={"TOKEN": "env:HOME"}, data={"train": str(data)})
    try:
        browser.get(f"{served.base}/jobs/{job.job_id}")
        _wait(browser, lambda d: "& done" in _text(d, "log"))
        log = browser.find_element("id", "log")
        assert "chief-0 | <b>bold?</b> <script>document.title = 'owned'</script> & done" in log.text
        assert log.find_elements("css selector", "b, script") == []  # text, not markup
        assert browser.title == f"tfcloud: {job.job_id}"
        # Start-up noise is left off as in the terminal, until "Show everything".
        assert "start-up noise" not in log.text
        assert _text(browser, "hidden-count") == "1 start-up line hidden"
        browser.find_element("id", "show-all").click()
        assert "start-up noise" in log.text
        browser.find_element("id", "show-all").click()

        _wait(browser, lambda d: _text(d, "job-state") == "running")
        # The plan's facts as the text plan, --json and run(dry_run=True) show them: secrets by reference, env
        # names (never values), data sets.
        assert _text(browser, "plan").splitlines() == [f"entry point {tmp_path / 'live.py'} {trigger}",
                                                        "strategy (the script's own)",
                                                        "distribution_strategy=None: the script sets up its own "
                                                        "strategy",
                                                        "secret TOKEN from env:HOME",
                                                        "env MODE (values not shown)",
                                                        f"data train = {data} ($TFCLOUD_DATA_TRAIN)"]
        assert "fast" not in _text(browser, "plan")
        assert [c.text for c in browser.find_elements("css selector", "#pools tbody td")] == [
            "chief", "1", "n1-standard-4", "-"]
        assert _text(browser, "tensorboard") == f"tfcloud tensorboard {job.job_id}"
        screenshot(browser, "ui-job")
        trigger.touch()
        written = time.monotonic()
        _wait(browser, lambda d: "the trigger appeared" in _text(d, "log"))  # no reload: the stream brings it
        print(f"new line shown {time.monotonic() - written:.3f} s after the replica wrote it")

        browser.find_element("id", "cancel").click()
        alert = _wait(browser, expected_conditions.alert_is_present())
        assert alert.text == f"Cancel {job.job_id}? Its replicas are stopped."
        alert.accept()
        _wait(browser, lambda d: _text(d, "job-state") == "cancelled")
        _wait(browser, lambda d: "every line is in" in _text(d, "log-state"))
        assert job.info().state.value == "cancelled"
        assert not browser.find_element("id", "cancel").is_enabled()
    finally:
        job.cancel()
        job.wait(60)


FOLD_SCRIPT = """
import os, pathlib, sys, time
me = os.environ["TFCLOUD_REPLICA"]
here = pathlib.Path(sys.argv[1])
(here / me).touch()
while len(list(here.iterdir())) < 2:
    time.sleep(0.01)
if me != "chief-0":
    time.sleep(2)  # the behaviour under test: a replica 2 s late still folds, by what the lines say, not when
print("Epoch 1/2", flush=True)
print("loss: 0.174%d - %dms/epoch" % (len(me), 900 + len(me)), flush=True)  # differ only in words with digits
print("I am", me, flush=True)
"""


def test_lines_that_replicas_print_alike_show_once_on_the_page(served: Served, browser: Any,
                                                               tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    barrier = tmp_path / "barrier"
    barrier.mkdir()
    job = _submit(tmp_path, "fold.py", FOLD_SCRIPT, entry_point_args=[str(barrier)], worker_count=1,
                  worker_config="CPU")
    assert job.wait(120).state.value == "succeeded"
    browser.get(f"{served.base}/jobs/{job.job_id}")
    _wait(browser, lambda d: "every line is in" in _text(d, "log-state"))
    lines = _text(browser, "log").splitlines()
    assert lines.count("2 replicas | Epoch 1/2") == 1, lines
    assert lines.count("2 replicas | loss: 0.1747 - 907ms/epoch") == 1, lines  # the first replica's line
    assert "chief-0    | I am chief-0" in lines and "worker-0   | I am worker-0" in lines, lines
    Select(browser.find_element("id", "replica")).select_by_value("worker-0")  # one replica: its lines, folded too
    assert _text(browser, "log").splitlines() == ["2 replicas | Epoch 1/2", "2 replicas | loss: 0.1747 - 907ms/epoch",
                                                  "worker-0   | I am worker-0"]


STUDY_SCRIPT = """
import argparse
import tfcloud

p = argparse.ArgumentParser()
p.add_argument("--x", type=float)
p.add_argument("--kind")
a = p.parse_args()
tfcloud.report(loss=(a.x - 0.3) ** 2 + (0.5 if a.kind == "b" else 0.0))
"""


def test_a_study_page_shows_the_trials_the_best_starred_its_rerun_command_and_the_plot(
        served: Served, browser: Any, tmp_path: Path) -> None:
    pytest.importorskip("optuna", reason="local studies need tfcloud[tune]")
    pytest.importorskip("matplotlib", reason="the study's plot needs tfcloud[tune]")
    import tfcloud

    script = tmp_path / "fit.py"
    script.write_text(STUDY_SCRIPT)
    study = tfcloud.tune(script, params=["x=double:0.01:1:log", "kind=categorical:a,b"], metric="loss",
                         goal="minimize", max_trials=3, parallel_trials=3, distribution_strategy=None)
    info = study.wait(120)
    assert info.state.value == "succeeded"
    best = info.best_trial
    assert best is not None

    browser.get(served.base + "/")
    # the list refreshes itself; a listing answered within FRESH_S of the study's start may not hold it yet
    _wait(browser, lambda d: d.find_elements("link text", study.study_id))[0].click()
    _wait(browser, lambda d: _text(d, "study-state") == "succeeded")
    rows = browser.find_elements("css selector", "#trials-table tbody tr")
    assert [r.get_attribute("data-trial") for r in rows] == [t.trial_id for t in info.trials]
    starred = browser.find_elements("css selector", "#trials-table tr.best")
    assert [r.get_attribute("data-trial") for r in starred] == [best.trial_id]
    assert starred[0].text.startswith(f"★ {best.trial_id} ")
    assert _text(browser, "rerun") == study.rerun_command(best)
    _wait(browser, lambda d: d.execute_script("const i = document.getElementById('plot');"
                                              "return i.complete && i.naturalWidth > 200;"))
    screenshot(browser, "ui-study")


def _get(url: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_a_request_without_the_token_is_refused(served: Served) -> None:
    for path in ("/", "/jobs/local-x-20260101-000000-abcd", "/api/jobs/local-x-20260101-000000-abcd/logs",
                 "/static/ui.css", "/?token=wrong-token-123"):
        assert _get(served.base + path) == 403, path
    # An action needs the token in its header: in the address (or a cookie) it does not do.
    cancel = "/api/jobs/local-x-20260101-000000-abcd/cancel"
    assert _get(f"{served.base}{cancel}?token={TOKEN}", method="POST") == 403
    assert _get(served.base + cancel, method="POST", headers={"Cookie": f"tfcloud_ui={TOKEN}"}) == 403
    assert _get(served.base + cancel, method="POST", headers={"X-Tfcloud-Token": TOKEN}) == 404  # no such job
    assert _get(served.base + "/static/ui.css", headers={"X-Tfcloud-Token": TOKEN}) == 200


def _events(served: Served, path: str, last_id: str | None = None) -> list[tuple[str | None, str, str]]:
    """A log stream read to its end: (id, event, data) each."""
    import http.client

    connection = http.client.HTTPConnection(served.base.removeprefix("http://"), timeout=60)
    headers = {"X-Tfcloud-Token": TOKEN, **({"Last-Event-ID": last_id} if last_id else {})}
    try:
        connection.request("GET", path, headers=headers)
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            found.append((fields.get("id"), fields["event"], fields.get("data", "")))
    return found


def test_a_vertex_ai_log_stream_resumes_from_its_last_event_id(served: Served, tfcloud_emulator: Any) -> None:
    import json

    from google.cloud import aiplatform_v1 as vertex

    code = "for i in range(3): print(f'step {i}', flush=True)"
    pool = vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                 container_spec=vertex.ContainerSpec(image_uri="us-docker.pkg.dev/p/r/train:1",
                                                                     command=[sys.executable, "-c", code]))
    client = tfcloud_emulator.job_client()
    try:
        created = client.create_custom_job(parent=tfcloud_emulator.parent, custom_job=vertex.CustomJob(
            display_name="vertex-steps", job_spec=vertex.CustomJobSpec(worker_pool_specs=[pool])))
        job_id = created.name.rsplit("/", 1)[1]
        while client.get_custom_job(name=created.name).state.name not in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"):
            time.sleep(0.2)
    finally:
        client.transport.close()
    first = _events(served, f"/api/jobs/{job_id}/logs")
    texts = [line["x"] for _, event, data in first if event == "lines" for line in json.loads(data)]
    assert [t for t in texts if t.startswith("step ")] == ["step 0", "step 1", "step 2"]
    assert first[-1][1] == "end"
    last_id = [i for i, event, _ in first if event == "lines"][-1]
    assert last_id is not None and last_id.count(":") == 3
    again = _events(served, f"/api/jobs/{job_id}/logs", last_id)  # a reconnect: nothing twice, then the end
    assert [(event, data) for _, event, data in again] == [("end", '{"state": "succeeded"}')]
