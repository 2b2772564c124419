"""What ``tfcloud.run(entry_point=None)`` submits: the running script, or the running notebook's file.

From a script: ``__main__.__file__`` (or ``sys.argv[0]``). From a Jupyter kernel, the notebook's file as
saved on disk, found in this order:

1. VS Code's ``__vsc_ipynb_file__`` variable in the kernel's namespace;
2. Colab keeps its notebooks in Google Drive, not on the runtime's disk: a clear error asking for
   ``entry_point=``;
3. ``JPY_SESSION_NAME``, the notebook path that jupyter_server (2.x) gives the kernels it starts;
4. the Jupyter servers running on this machine (their ``jpserver-*.json`` / ``nbserver-*.json`` files in
   Jupyter's runtime directory): the session whose kernel id is this kernel's (from its connection file
   ``kernel-<id>.json``), asked on loopback through the server's ``api/sessions``.

Nothing here is imported at module level beyond the standard library.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from tfcloud.errors import ValidationError

__all__ = ["current_entry_point", "in_notebook"]

_EXPECTED = "a .py script or .ipynb notebook to run"
_TIMEOUT_S = 2.0


def _shell() -> Any | None:
    """The running IPython shell, without importing IPython where it was not already imported."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        return ipython.get_ipython()
    except Exception:  # a broken or stubbed IPython: not a kernel we can ask
        return None


def in_notebook() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Notebook, VS Code, Colab...), False elsewhere (a script, a
    terminal IPython)."""
    shell = _shell()
    return shell is not None and getattr(shell, "kernel", None) is not None


def current_entry_point() -> tuple[Path, bool]:
    """The file to submit when ``entry_point`` is None, and whether it is the running notebook.

    Raises :class:`ValidationError` (field ``entry_point``) with a hint when it cannot be found.
    """
    shell = _shell()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        return _notebook_file(shell), True
    return _script_file(), False


def _script_file() -> Path:
    main = sys.modules.get("__main__")
    candidates = [getattr(main, "__file__", None), sys.argv[0] if sys.argv else None]
    for candidate in candidates:
        if candidate and str(candidate).endswith(".py") and Path(candidate).is_file():
            return Path(candidate).resolve()
    raise ValidationError(
        "entry_point",
        _EXPECTED + " (with None, the running script; this Python session runs none)",
        None,
        hint='Pass the file: tfcloud.run(entry_point="train.py", ...).',
    )


def _notebook_file(shell: Any) -> Path:
    tried: list[str] = []
    namespace = getattr(shell, "user_ns", None) or {}
    vscode = namespace.get("__vsc_ipynb_file__")
    if vscode:
        path = Path(str(vscode))
        if path.is_file():
            return path.resolve()
        tried.append(f"VS Code's __vsc_ipynb_file__ ({vscode}: no such file)")
    if "google.colab" in sys.modules:
        raise ValidationError(
            "entry_point",
            _EXPECTED + " (with None, the running notebook's file; Colab keeps it in Google Drive, not on "
            "this runtime's disk)",
            None,
            hint="Save the notebook onto the runtime (File > Download > Download .ipynb, then upload it to "
            '/content), and pass it: tfcloud.run(entry_point="/content/train.ipynb", ...).',
        )
    session = os.environ.get("JPY_SESSION_NAME") or namespace.get("__session__")
    if session:
        for path in (Path(session), Path.cwd() / session, Path.cwd() / Path(session).name):
            if path.suffix == ".ipynb" and path.is_file():
                return path.resolve()
        tried.append(f"JPY_SESSION_NAME ({session}: no such file)")
    kernel_id = _kernel_id()
    if kernel_id is None:
        tried.append("the kernel's connection file (not named kernel-<id>.json)")
    else:
        found, asked = _ask_servers(kernel_id)
        if found is not None:
            return found
        tried.append(asked)
    raise ValidationError(
        "entry_point",
        _EXPECTED + " (with None, the running notebook's file, which could not be found)",
        None,
        hint="Tried " + "; ".join(tried) + '.\nPass the notebook: tfcloud.run(entry_point="train.ipynb", ...).',
    )


def _kernel_id() -> str | None:
    try:
        from ipykernel.connect import get_connection_file

        connection_file = get_connection_file()
    except Exception:  # not an ipykernel kernel, or one without a connection file
        return None
    match = re.fullmatch(r"kernel-(.+)\.json", Path(connection_file).name)
    return match.group(1) if match else None


def _server_files() -> list[Path]:
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        runtime = Path(jupyter_runtime_dir())
    except Exception:  # jupyter_core comes with every kernel; be safe anyway
        return []
    files = sorted(runtime.glob("jpserver-*.json")) + sorted(runtime.glob("nbserver-*.json"))
    return sorted(files, key=lambda p: p.stat().st_mtime if p.exists() else 0.0, reverse=True)


def _ask_servers(kernel_id: str) -> tuple[Path | None, str]:
    """Find this kernel's session on the local Jupyter servers: (notebook file, what was asked)."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    files = _server_files()
    if not files:
        return None, "the Jupyter servers on this machine (none found in Jupyter's runtime directory)"
    for file in files:
        try:
            info = json.loads(file.read_text(encoding="utf-8"))
            url = str(info["url"]).rstrip("/") + "/api/sessions"
            request = urllib.request.Request(url)
            if info.get("token"):
                request.add_header("Authorization", f"token {info['token']}")
            with opener.open(request, timeout=_TIMEOUT_S) as response:
                sessions = json.loads(response.read().decode("utf-8"))
        except Exception:  # a stale server file, a server that wants a password: try the next
            continue
        root = Path(str(info.get("root_dir") or info.get("notebook_dir") or "."))
        for session in sessions if isinstance(sessions, list) else []:
            if (session.get("kernel") or {}).get("id") != kernel_id:
                continue
            relative = session.get("path") or (session.get("notebook") or {}).get("path")
            if relative:
                path = (root / relative).expanduser()
                if path.is_file():
                    return path.resolve(), ""
    return None, f"the {len(files)} Jupyter server(s) on this machine (no session for kernel {kernel_id})"
