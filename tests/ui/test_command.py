"""``tfcloud ui`` as a command and ``tfcloud.ui()`` from Python: the address and the token checked before anything
starts (exit 2, the exact message), the address printed alone on stdout, Ctrl-C exits 130."""

from __future__ import annotations

import os
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.ui.conftest import start_ui
from tfcloud.cli import main


@pytest.mark.parametrize(("argv", "message"), [
    (["--host", "0.0.0.0"], "Error: Invalid `--host`: expected a loopback address (127.0.0.1, the default) unless "
                            "--token is given, received '0.0.0.0'."),
    (["--host", "192.168.77.1", "--port", "0"], "Error: Invalid `--host`: expected a loopback address (127.0.0.1, "
                                                "the default) unless --token is given, received '192.168.77.1'."),
    (["--port", "70000"], "Error: Invalid `--port`: expected a port from 0 (any free one) to 65535, received 70000."),
    (["--token", "short"], "Error: Invalid `--token`: expected 8 to 256 characters: letters, digits, . _ ~ -, "
                           "received '(hidden)'."),
    (["--host", "0.0.0.0", "--token", "password"], "Error: Invalid `--token`: expected a secret hard to guess on an "
                                                    "address other than loopback (64 bits or more), received "
                                                    "'(hidden)'."),
    (["--host", "0.0.0.0", "--token", "abababababababababab"], "Error: Invalid `--token`: expected a secret hard to "
                                                                "guess on an address other than loopback (64 bits or "
                                                                "more), received '(hidden)'."),
    (["--target", "kubernetes"], "Error: Invalid `--target`: expected one of local, vertex, ray, received "
                                 "'kubernetes'."),
    # the targets' options, as every verb takes them: each must be a listed target's; -o needs one target
    (["--target", "local", "--project", "my-project"], "Error: Invalid `project`: expected an option of a listed "
                                                       "target (local), received 'my-project'."),
    (["-o", "spot=true"], "Error: Invalid `-o`: expected one --target with -o KEY=VALUE (-o sets that target's "
                          "options), received <-o with local, vertex, ray>."),
    (["--target", "local", "-o", "spot=true"], "Error: Invalid `-o spot`: expected an option of the local target "
                                               "(container, max_restarts, liveness_timeout, base_output_dir), "
                                               "received 'true'."),
])
def test_a_bad_address_or_token_exits_2_before_anything_starts(argv: list[str], message: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--no-browser", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0] == message


def test_a_weak_token_on_another_address_says_why_and_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--no-browser", "--host", "0.0.0.0", "--token", "password"]) == 2
    err = capsys.readouterr().err
    assert "That token is too easy to guess: 8 characters of that kind are about 38 bits, fewer than 64." in err
    assert '--token "$(openssl rand -hex 24)"' in err
    assert "password" not in err  # the token itself is never printed


def test_a_host_other_than_loopback_says_how_to_give_a_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--host", "0.0.0.0"]) == 2
    assert 'tfcloud ui --host HOST --token "$(openssl rand -hex 24)"' in capsys.readouterr().err


def test_a_port_in_use_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["ui", "--no-browser", "--port", str(port)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"Error: Cannot listen on 127.0.0.1:{port}: Address already in use."
    assert err[1] == "Pick another port: tfcloud ui --port N (0: any free port)."


def test_the_address_alone_goes_to_stdout_and_ctrl_c_exits_130() -> None:
    proc, url = start_ui(os.environ)
    try:
        base, _, token = url.partition("/?token=")
        assert base.startswith("http://127.0.0.1:") and len(token) == 48
        with urllib.request.urlopen(urllib.request.Request(base + "/", headers={"X-Tfcloud-Token": token}),
                                    timeout=30) as response:
            assert response.status == 200
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert out == ""  # after the address, nothing more on stdout
    assert "Traceback" not in err
    assert err.startswith("tfcloud ui: the dashboard of local, vertex, ray jobs and studies. Open:\n")


def _status(url: str, headers: dict[str, str] | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_tfcloud_ui_serves_from_a_thread_whichever_import_came_first() -> None:
    import tfcloud
    import tfcloud.ui.app

    dashboard = tfcloud.ui(host="0.0.0.0", port=0, token="a-token-of-mine", open_browser=False, targets=["local"])
    try:
        local = f"http://127.0.0.1:{dashboard.port}/"
        assert dashboard.url == f"http://{socket.gethostname()}:{dashboard.port}/?token=a-token-of-mine"
        assert _status(local) == 403
        assert _status(local, {"X-Tfcloud-Token": "a-token-of-mine"}) == 200
        assert 'href="' in dashboard._repr_html_()
    finally:
        dashboard.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{dashboard.port}/", timeout=5)


def test_ctrl_c_with_a_log_stream_open_exits_130_at_once_and_quietly(tmp_path: Path) -> None:
    import http.client
    import textwrap

    import tfcloud

    script = tmp_path / "quiet.py"
    script.write_text(textwrap.dedent("""
        import time
        print("waiting", flush=True)
        time.sleep(600)
    """))
    job = tfcloud.submit(script, distribution_strategy=None)
    proc, url = start_ui(os.environ)
    try:
        base, _, token = url.partition("/?token=")
        connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=30)
        connection.request("GET", f"/api/jobs/{job.job_id}/logs", headers={"X-Tfcloud-Token": token})
        stream = connection.getresponse()
        while b"waiting" not in stream.readline():  # the page is following the job
            pass
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        connection.close()
        assert out == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
        job.cancel()
        job.wait(60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "Cancel" not in err, err
    assert err == "tfcloud ui: the dashboard of local, vertex, ray jobs and studies. Open:\nCtrl-C stops it.\n"


def test_a_weak_token_on_loopback_is_taken_with_a_note() -> None:
    proc, url = start_ui(os.environ, "--token", "password")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert url.endswith("/?token=password") and proc.returncode == 130
    assert ("Note: that --token is easy to guess (8 characters of that kind are about 38 bits, fewer than 64); it "
            "would be refused on an address other than loopback.") in " ".join(err.split())


def test_the_dashboard_gives_each_target_the_options_it_takes() -> None:
    """``tfcloud ui --project P --emulator-host H --ray A``: the Vertex AI listing and pages get the project and
    emulator, Ray's the address, the local target none; -o goes to the one target listed."""
    from tfcloud.ui.views import Sources

    sources = Sources(options={"project": "my-project", "emulator_host": "127.0.0.1:1", "ray_address": "http://h:1",
                               "given_as": {"project": "--project"}})
    assert sources.options_for("1234") == {"project": "my-project", "emulator_host": "127.0.0.1:1"}
    assert sources.options_for("ray-x-20260101-000000-abcd") == {"ray_address": "http://h:1"}
    assert sources.options_for("local-x-20260101-000000-abcd") == {}
    one = Sources(["vertex"], options={"target_options": {"region": "europe-west4"}})
    assert one.options_for("1234") == {"target_options": {"region": "europe-west4"}}


def test_jobs_a_target_cannot_read_come_from_the_target_it_declares(tmp_path: Path) -> None:
    """The dashboard lists the unreadable records of the targets that keep them (``Target.unreadable``), by no
    target's name."""
    import tfcloud.targets as targets
    from tfcloud.records.statedir import default_state_dir, jobs_dir
    from tfcloud.ui.views import Sources

    broken = jobs_dir(default_state_dir()) / "local-broken-20260101-000000-abcd"
    broken.mkdir(parents=True)
    (broken / "job.json").write_text("{not json")
    assert [c.name for c in targets.builtin_targets() if c.unreadable] == ["local"]
    rows = Sources(["local", "vertex"]).unreadable()
    assert [(r["job_id"], r["why"].split(":")[0]) for r in rows] == [(broken.name, "its job.json cannot be read")]
    assert Sources(["vertex"]).unreadable() == []
