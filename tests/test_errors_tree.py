"""The error tree drawn in tfcloud/errors.py's docstring is the classes' own: each drawn class's parent is its
base class, and every error class is drawn."""

from __future__ import annotations

import re

import tfcloud.errors as errors


def test_the_drawing_is_the_tree() -> None:
    drawn: dict[str, str] = {}
    parents: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z][A-Za-z]+Error)\b", line)
        if found is None:
            continue
        depth = len(found.group(1)) // 4 + (1 if "──" in line else 0)
        parents[depth:] = [found.group(2)]
        if depth:
            drawn[found.group(2)] = parents[depth - 1]
    classes = {name: cls for name, cls in vars(errors).items()
               if isinstance(cls, type) and issubclass(cls, errors.TfcloudError) and cls is not errors.TfcloudError}
    assert drawn == {name: cls.__bases__[0].__name__ for name, cls in classes.items()}
