"""Converting notebooks: each kind of IPython syntax, what the converted script does, and the errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfcloud.entry.notebook import convert_notebook
from tfcloud.errors import NotebookError, ValidationError

# -- shell lines ------------------------------------------------------------------------------------------


def test_shell_lines_run_in_order_with_ipython_expansion(job):
    result = job(
        "name = 'wörld'\nn = 2\nprint('before', flush=True)\n!echo hello $name {n * 21} $$FROM_SHELL\nprint('after')",
        "def show(x):\n    !echo local $x\nshow('inside')",
        "files = !printf 'a\\nb\\n'\nprint(files, files.s, files.n.count('\\n'))",
        "!exit 3\nprint('exit code', _exit_code)",
        "!!echo double",
        env={"FROM_SHELL": "shell-var"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "before",
        "hello wörld 42 shell-var",
        "after",
        "local inside",
        "['a', 'b'] a b 1",
        "exit code 3",
    ]
    assert "tfcloud: `!exit 3` exited with status 3; the notebook goes on, as in Jupyter." in result.stderr


_EXPANSIONS = [
    "plain", "$name", "{name}", "$$name", "${name}", "'$name'", "a '$name' $name", "{n*2:}", "{n!r}",
    "$obj.attr", "$missing", "{missing}", "{{literal}}", "$n{n}", "price: $5", "{name.upper()}",
]


def test_expansion_is_ipythons(job):
    """The job's `$name` / `{expr}` expansion gives what IPython's own gives, string by string."""
    from IPython.utils.text import DollarFormatter

    class Obj:
        attr = "attribute"

    namespace = {"name": "wörld", "n": 3, "obj": Obj()}
    expected = []
    for text in _EXPANSIONS:
        try:
            expected.append(DollarFormatter().vformat(text, args=[], kwargs=namespace))
        except Exception:
            expected.append(text)
    result = job(
        "class Obj:\n    attr = 'attribute'\nname, n, obj = 'wörld', 3, Obj()\n"
        f"for text in {_EXPANSIONS!r}:\n    print(repr(get_ipython().var_expand(text)))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [repr(e) for e in expected]


def test_shell_cells_bash_sh_script(job):
    result = job(
        "%%bash\necho from bash\nfor i in 1 2; do echo $i; done",
        "%%sh\necho from sh",
        "%%script python3 --out captured\nprint('from python', 6 * 7)",
        "print(repr(captured))",
        "%%bash --no-raise-error\nexit 4",
        "print('went on')",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["from bash", "1", "2", "from sh", "'from python 42\\n'", "went on"]


def test_failing_bash_cell_fails_the_job_as_in_jupyter(job):
    result = job("%%bash\nexit 5", "print('not reached')")
    assert result.returncode != 0
    assert "CalledProcessError" in result.stderr
    assert "not reached" not in result.stdout


def test_indented_shell_line_in_a_loop(job):
    result = job("for i in range(3):\n    !echo item {i}")
    assert result.stdout.splitlines() == ["item 0", "item 1", "item 2"]


def test_shell_notes(convert):
    converted = convert("!nvidia-smi", "x = !ls\n%ls -a")
    assert converted.notes == (
        "cell 1, line 1: `!nvidia-smi` runs in the job as a shell command.",
        "cell 2, line 1: `!!ls` runs in the job as a shell command.",
        "cell 2, line 2: `!ls -a` runs in the job as a shell command.",
    )


# -- requirements -----------------------------------------------------------------------------------------


def test_pip_lines_become_requirements(convert):
    converted = convert(
        "%pip install -q tensorflow-datasets 'numpy<2'",
        "!pip install -U --quiet matplotlib > /dev/null 2>&1\n!pip3 install --upgrade 'keras-tuner>=1.4'",
        "!python -m pip install --progress-bar off pandas==2.2.2\n!{sys.executable} -m pip install scipy",
        "%pip install --extra-index-url https://example.test/simple private-pkg -e ./localpkg --pre",
        "!pip list\n!pip install -q tensorflow-datasets",
    )
    assert converted.requirements == (
        "tensorflow-datasets",
        "numpy<2",
        "matplotlib",
        "keras-tuner>=1.4",
        "pandas==2.2.2",
        "scipy",
        "--extra-index-url https://example.test/simple",
        "private-pkg",
        "-e ./localpkg",
        "--pre",
    )
    assert converted.notes[0] == (
        "cell 1, line 1: `%pip install -q tensorflow-datasets 'numpy<2'` → the job's requirements: "
        "tensorflow-datasets, numpy<2 (installed before the job starts)."
    )
    assert "cell 5, line 1: `!pip list` runs in the job as a shell command." in converted.notes


def test_pip_requirements_file_next_to_the_notebook_or_written_by_the_notebook(tmp_path, make_notebook):
    (tmp_path / "requirements.txt").write_text("# pinned\nrequests==2.32.3\n\npyyaml  # inline comment\n")
    converted = convert_notebook(make_notebook(
        "!pip install -r requirements.txt",
        "%%writefile extra-reqs.txt\nrich\n",
        "%pip install -r extra-reqs.txt",
    ))
    assert converted.requirements == ("requests==2.32.3", "pyyaml", "rich")


def test_pip_lines_do_not_run_in_the_job(job):
    result = job("%pip install -q definitely-not-a-package-xyz\n!pip install nope-xyz\nprint('ok')")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert result.stderr.splitlines() == [
        "tfcloud: `%pip install -q definitely-not-a-package-xyz` skipped: its packages are the job's "
        "requirements, installed before the job started.",
        "tfcloud: `!pip install nope-xyz` skipped: its packages are the job's requirements, installed before "
        "the job started.",
    ]


def test_pip_errors(convert, tmp_path):
    with pytest.raises(NotebookError) as err:
        convert("import tensorflow as tf", "!pip install -q tf-models-official=={tf.__version__}")
    assert str(err.value) == (
        "nb.ipynb, cell 2, line 1: `!pip install -q tf-models-official=={tf.__version__}`: the requirement "
        "`tf-models-official=={tf.__version__}` depends on a Python value, which is only known when the "
        "notebook runs.\nWrite the requirement out in full (e.g. `%pip install tensorflow-datasets==4.9.4`), "
        "or pass requirements_txt=."
    )
    assert (err.value.cell, err.value.line) == (2, 1)
    chained = convert("!cd lib && pip install .")
    assert chained.requirements == ()
    assert chained.notes == (
        "cell 1, line 1: `!cd lib && pip install .` runs in the job as a shell command: it installs packages "
        "while the job runs (a `!pip install` line of its own would install them with the image).",
    )
    with pytest.raises(NotebookError) as err:
        convert("%pip install -r missing.txt")
    assert str(err.value) == (
        f"nb.ipynb, cell 1, line 1: `%pip install -r missing.txt`: no requirements file missing.txt next to "
        f"the notebook ({tmp_path / 'missing.txt'}).\nKeep the file beside the notebook, or pass requirements_txt=."
    )


# -- environment and files --------------------------------------------------------------------------------


def test_env_cd_and_writefile(job):
    result = job(
        "%env GREETING=hi there\n%set_env OTHER 7\nimport os\nprint(os.environ['GREETING'], os.environ['OTHER'])",
        "value = %env GREETING\nprint('value', value)",
        "%mkdir -p sub\n%cd sub\nimport os\nprint(os.path.basename(os.getcwd()))",
        "%%writefile helper.py\nX = 'written ü'\n",
        "%%file -a helper.py\nY = 2\n",
        "from helper import X, Y\nprint(X, Y)",
        "%cd -\nprint(sorted(p for p in os.listdir('.') if p != '__pycache__'))",
        "here = %pwd\nprint(here == os.getcwd())",
        "%run -i sub/helper.py\nprint('run', X, Y)",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["env: GREETING=hi there", "env: OTHER=7", "hi there 7"]
    assert lines[3] == "value hi there"
    assert lines[4].endswith("/sub") and lines[5] == "sub"
    assert lines[6:10] == ["Writing helper.py", "Appending to helper.py", "written ü 2", lines[9]]
    assert lines[9].endswith("/job")
    assert lines[10:] == ["['sub', 'tfcloud_notebook_nb.py']", "True", "run written ü 2"]


# -- display and interactive magics -----------------------------------------------------------------------


def test_display_and_interactive_magics_are_dropped_with_one_note_each(job, convert):
    cells = (
        "%matplotlib inline\n%load_ext tensorboard\n%config InlineBackend.figure_format = 'retina'",
        "%tensorboard --logdir logs\n%timeit sum(range(10))",
        "try:\n    %tensorflow_version 2.x\nexcept Exception:\n    pass",
        "%%html\n<b>hello</b>",
        "%%timeit\nsum(range(100))",
        "print?",
        "print('ran')",
    )
    converted = convert(*cells)
    assert converted.notes == (
        "cell 1, line 1: `%matplotlib inline` dropped (display only: nothing is shown in a job).",
        "cell 1, line 2: `%load_ext tensorboard` dropped (configures the interactive IPython shell, which a job "
        "does not have).",
        "cell 1, line 3: `%config InlineBackend.figure_format = 'retina'` dropped (configures the interactive "
        "IPython shell, which a job does not have).",
        "cell 2, line 1: `%tensorboard --logdir logs` dropped (TensorBoard is not started in a job; the logs the "
        "job writes are kept).",
        "cell 2, line 2: `%timeit sum(range(10))` dropped (a benchmark: the job does not time statements).",
        "cell 3, line 2: `%tensorflow_version 2.x` dropped (Colab-only: the job uses the TensorFlow of its image).",
        "cell 4, line 1: `%%html` cell dropped (display only: nothing is shown in a job).",
        "cell 5, line 1: `%%timeit` cell dropped (a benchmark: the job does not time cells).",
        "cell 6, line 1: `%pinfo print` dropped (interactive: there is no one at the keyboard in a job).",
    )
    result = job(*cells)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran\n"


def test_time_capture_and_prun_run_their_code(job):
    result = job(
        "%time total = sum(range(10))\nprint('total', total)",
        "value = %time 6 * 7\nprint('value', value)",
        "%%time\nfor i in range(2):\n    print('loop', i)\ntext = '''multi\n  line'''\nprint(text)",
        "%%capture cap\nprint('hidden')\n!echo shell hidden",
        "print('captured', repr(cap.stdout))",
        "%%capture\nprint('dropped output')",
        "%%capture out --no-stderr\n%%time\nprint('nested')",
        "print('nested captured', 'nested' in out.stdout, 'Wall time' in out.stdout)",
        "%prun -s cumulative sorted(range(5))",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "total 45" in out and "value 42" in out
    assert "loop 0\nloop 1\nmulti\n  line\nCPU times: user" in out
    assert out.count("Wall time: ") == 3
    assert "captured 'hidden\\nshell hidden\\n'" in out
    assert "dropped output" not in out and "hidden\n" not in out
    assert "nested captured True True" in out
    assert "function calls in" in out


def test_capture_body_error_is_not_swallowed(job):
    result = job("%%capture\nprint('quiet')\nraise ValueError('boom in capture')")
    assert result.returncode == 1
    assert "ValueError: boom in capture" in result.stderr


# -- unsupported magics and syntax errors -----------------------------------------------------------------

_SKIP = ("Remove it, or tag the cell `tfcloud-skip` to leave the cell out of the job (see "
         "tfcloud docs notebooks).")


@pytest.mark.parametrize(
    ("cells", "message", "where"),
    [
        (("x = 1", "# comment\n%debug"),
         "nb.ipynb, cell 2, line 2: `%debug` cannot run in a job: the debugger needs someone at the keyboard.\n"
         + _SKIP, (2, 2)),
        (("%frobnicate --now",),
         "nb.ipynb, cell 1, line 1: `%frobnicate --now`: `%frobnicate` is not a magic tfcloud can run in a job.\n"
         + _SKIP, (1, 1)),
        (("\n\n%%sql\nSELECT 1",),
         "nb.ipynb, cell 1, line 3: `%%sql`: `%%sql` is not a cell magic tfcloud can run in a job.\n" + _SKIP,
         (1, 3)),
        (("%conda install -y numpy",),
         "nb.ipynb, cell 1, line 1: `%conda install -y numpy` cannot run in a job: conda packages cannot be "
         "added to the job's image; use `%pip install`, or pass requirements_txt=.\n" + _SKIP, (1, 1)),
        (("%%capture\nprint(1)\n%store x",),
         "nb.ipynb, cell 1, line 3: `%store x` cannot run in a job: it works on the notebook editor or the "
         "session's history, which a job does not have.\n" + _SKIP, (1, 3)),
        (("%run other.ipynb",),
         "nb.ipynb, cell 1, line 1: `%run other.ipynb` cannot run in a job: it runs another notebook.\n"
         "Convert that notebook to a script (`jupyter nbconvert --to script`) and %run the .py file.", (1, 1)),
    ],
)
def test_unsupported_magics(convert, cells, message, where):
    with pytest.raises(NotebookError) as err:
        convert(("markdown", "# Title"), *cells)
    # The Markdown cell counts: cell numbers are positions among all cells.
    shifted = re.sub(r"cell (\d+)", lambda m: f"cell {int(m.group(1)) + 1}", message)
    assert str(err.value) == shifted
    assert (err.value.cell, err.value.line) == (where[0] + 1, where[1])


def test_syntax_errors_name_the_cell_and_line(convert):
    with pytest.raises(NotebookError) as err:
        convert("import os", ("markdown", "text"), ("code", "x = 1\nif x:\nprint('x')", {"count": 7}))
    assert str(err.value) == (
        "nb.ipynb, cell 3 (In [7]), line 3: expected an indented block after 'if' statement on line 2: "
        "`print('x')`"
    )
    assert (err.value.cell, err.value.line) == (3, 3)


def test_syntax_error_after_a_continued_magic_and_inside_a_cell_magic(convert):
    with pytest.raises(NotebookError) as err:
        convert("%pip install \\\n    numpy\nx = (1,\ny = 2")
    assert (err.value.cell, err.value.line) == (1, 3)
    with pytest.raises(NotebookError) as err:
        convert("\n%%time\nok = 1\n!echo fine\nprint 'py2'")
    assert (err.value.cell, err.value.line) == (1, 5)
    assert "`print 'py2'`" in str(err.value)


def test_top_level_await_has_a_hint(convert):
    with pytest.raises(NotebookError) as err:
        convert("import asyncio\nawait asyncio.sleep(0)")
    assert str(err.value) == (
        "nb.ipynb, cell 1, line 2: 'await' outside function: `await asyncio.sleep(0)`\n"
        "Jupyter runs top-level `await`; a script cannot. Wrap the code in an `async def` and run it with "
        "`asyncio.run(...)`."
    )


# -- the notebook as a whole ------------------------------------------------------------------------------


def test_empty_notebook(convert, tmp_path):
    converted = convert()
    assert converted.requirements == () and converted.notes == ()
    script = tmp_path / "empty.py"
    script.write_text(converted.script)
    from tests.notebook.nbhelpers import run_script

    assert run_script(script, cwd=tmp_path).returncode == 0


def test_markdown_raw_outputs_and_skipped_cells_are_not_shipped(convert, job):
    cells = (
        ("markdown", "# Heading with %magic and !shell"),
        ("raw", "%%not python at all"),
        ("code", "print('kept')", {"output": "OUTPUT-MARKER"}),
        ("code", "%debug\nprint('LEFT-OUT-CELL')", {"tags": ["tfcloud-skip"]}),
    )
    converted = convert(*cells)
    assert "OUTPUT-MARKER" not in converted.script and "Heading" not in converted.script
    assert "LEFT-OUT-CELL" not in converted.script
    assert converted.notes == ("cell 4: left out (tagged tfcloud-skip).",)
    assert job(*cells).stdout == "kept\n"


def test_non_ascii_source(job, convert):
    cells = ("# Données d'entraînement\nétiquette = 'café ☕ 数据'\nprint(étiquette)", "!echo «$étiquette»")
    assert "étiquette = 'café ☕ 数据'" in convert(*cells).script
    result = job(*cells)
    assert result.stdout == "café ☕ 数据\n«café ☕ 数据»\n"


def test_automagic_in_single_line_cells(convert):
    converted = convert("pip install tensorflow-hub", "ls = ['not', 'a', 'magic']", "cd = 1")
    assert converted.requirements == ("tensorflow-hub",)
    assert converted.notes[0] == (
        "cell 1, line 1: `pip install tensorflow-hub` runs as `%pip install tensorflow-hub` (IPython's automagic)."
    )
    assert len(converted.notes) == 2


def test_future_imports_move_to_the_top(job):
    result = job("from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return 1\nprint(f(0))")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1\n"


def test_get_ipython_and_display_without_ipython(job):
    result = job(
        "print('google.colab' in str(get_ipython()))\nget_ipython().run_line_magic('matplotlib', 'inline')",
        "display({'a': 1}, 'text')",
        "get_ipython().system('echo explicit')",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "False\n{'a': 1}\n'text'\nexplicit\n"


def test_tfcloud_run_and_remote_inside_the_job(job):
    result = job(
        "import tfcloud\nhandle = tfcloud.run(entry_point=None, worker_count=1, distribution_strategy='auto')\n"
        "print('handle', handle)",
        "if tfcloud.remote():\n    print('in the job')\nelse:\n    print('on the laptop')",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "handle None\nin the job\n"


def test_notebook_importing_ipython_requires_it(convert):
    converted = convert("from IPython.display import clear_output\nclear_output()")
    assert converted.requirements == ("ipython",)


def test_not_a_notebook_and_other_languages(tmp_path, make_notebook):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{not json")
    with pytest.raises(ValidationError) as err:
        convert_notebook(bad)
    assert str(err.value).startswith(
        "Invalid `entry_point`: expected a Jupyter notebook (.ipynb, nbformat 4) with at least one code cell, "
        "received <broken.ipynb: not valid JSON (")
    with pytest.raises(NotebookError) as err:
        convert_notebook(make_notebook("x <- 1", kernel_language="R"))
    assert str(err.value) == "nb.ipynb is a R notebook (its kernel's language); tfcloud runs Python notebooks."


def test_script_header_and_cell_markers(convert):
    script = convert(("markdown", "m"), ("code", "x = 1", {"count": 3})).script
    assert script.startswith("# nb.ipynb, converted to a script by tfcloud ")
    assert "\n# %% Cell 2 (In [3])\nx = 1\n" in script
    json.dumps(script)  # plain text


def test_converted_script_needs_only_the_standard_library(convert, tmp_path):
    script = convert("!echo x", "%%bash\necho y", "%%capture c\nprint(1)").script
    imported = set(re.findall(r"^\s*import (\w+)", script, flags=re.M))
    import sys

    assert imported <= set(sys.stdlib_module_names)
    assert Path(tmp_path).is_dir()


@pytest.mark.parametrize(("cell", "line", "text"), [
    ("if True:\n    x = 1\n  %time y = 2", 3, "`%time y = 2`"),
    ("for i in range(2):\n    !echo hi\n  print(i)", 3, "`print(i)`"),
    ("x = 0\nif x:\n        x = 1\n    %time y = 2", 4, "`%time y = 2`"),
])
def test_a_bad_unindent_beside_a_magic_names_the_cell_and_line(convert, cell, line, text):
    # IPython's tokenizer raises IndentationError before Python sees the cell: the cell's error, not a traceback.
    with pytest.raises(NotebookError) as err:
        convert("import os", cell)
    assert str(err.value) == (f"nb.ipynb, cell 2, line {line}: unindent does not match any outer indentation "
                              f"level: {text}")
    assert (err.value.cell, err.value.line) == (2, line)
