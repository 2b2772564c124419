"""Notebooks in the style of public tutorials (look-alikes written for these tests: TensorFlow's multi-worker
tutorial, TensorBoard in notebooks, a TF Hub text classifier) convert without error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.notebook.nbhelpers import run_script
from tfcloud.entry.notebook import convert_notebook

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("name", "requirements"),
    [
        ("multi_worker_lookalike.ipynb", ()),
        ("tensorboard_lookalike.ipynb", ("ipython",)),
        ("datasets_pip_lookalike.ipynb", (
            "tensorflow-hub", "tensorflow-datasets", "tf-models-official==2.15.*",
            "--extra-index-url https://example.test/simple", "rich", "ipython",
        )),
    ],
)
def test_public_style_notebooks_convert(name, requirements):
    converted = convert_notebook(DATA / name)
    assert converted.requirements == requirements
    assert converted.notes
    lines = [int(n.split(",")[0].split()[1]) for n in converted.notes if n.startswith("cell ")]
    assert lines == sorted(lines)  # notes follow the notebook's order


def test_tensorboard_notes_in_cell_order():
    notes = convert_notebook(DATA / "tensorboard_lookalike.ipynb").notes
    assert notes[:2] == (
        "cell 2, line 3: `%tensorflow_version 2.x` dropped (Colab-only: the job uses the TensorFlow of its image).",
        "cell 2, line 8: `%load_ext tensorboard` dropped (configures the interactive IPython shell, which a job "
        "does not have).",
    )


def test_multi_worker_lookalike_runs_as_a_job(tmp_path):
    script = tmp_path / "tfcloud_notebook_multi_worker.py"
    script.write_text(convert_notebook(DATA / "multi_worker_lookalike.ipynb").script, encoding="utf-8")
    result = run_script(script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Writing mnist_setup.py\n" in out and "Hello TensorFlow!\n" in out
    assert "main.py\nmnist_setup.py\n" in out  # `ls *.py`
    assert "Starting job # 1 in a separate thread.\n" in out
    assert out.count("workers 2") >= 2  # the foreground run, and the background one's log
