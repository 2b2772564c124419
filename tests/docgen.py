"""The docs' generators (docs/gen_options.py, docs/gen_rules.py: they live with the docs, outside the package),
loaded by path for the tests that check the generated tables are what the code says now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

DOCS = Path(__file__).resolve().parent.parent / "docs"


def generator(name: str) -> ModuleType:
    """``docs/<name>.py``, imported once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
