"""`nox -s demo_cloud` leaves nothing in the user's state dir: its submission keeps the stage timeline and the
build lock in a state dir of the demo's own, removed when the demo ends (the demo itself needs a Docker engine
and minutes: here, the real `tfcloud submit` it runs, with the environment it gives it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tfcloud.testing.cloud_demo import private_state_dir


def test_the_demos_submission_keeps_its_state_in_a_directory_of_its_own(tmp_path: Path) -> None:
    users = Path(os.environ["TFCLOUD_HOME"])  # the test's stand-in for ~/.local/state/tfcloud
    script = tmp_path / "train.py"
    script.write_text("print('trained')\n")
    with private_state_dir() as state:
        env = {**os.environ, "TFCLOUD_HOME": str(state)}
        done = subprocess.run([sys.executable, "-c", "import sys; from tfcloud.cli import main; "
                               "sys.exit(main(sys.argv[1:]))", "submit", str(script), "--strategy", "none"],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert (state / "jobs").is_dir() and list((state / "jobs").iterdir())  # the job and its timeline went there
    assert not state.exists()
    assert list(users.iterdir()) == []
