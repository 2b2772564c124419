"""Every link to the docs site that a user is given lands on a page of the site and on a heading of that page,
and the site is published the way CI builds it.

The links are the site's addresses in the package's strings (help texts, hints, error messages, docstrings:
every ``.py`` file, read with ``ast``, and the templates), the addresses ``tfcloud.config.docsite.page("name",
"anchor")`` makes where it is called with literal arguments, and the absolute addresses in README.md and
docs/ (mkdocs --strict checks the links between pages, not these). Each one must name a page in mkdocs.yml's
nav and, with ``#anchor``, a heading of that page as mkdocs makes its anchor (tests/docsite.py).

Read the Docs publishes the site from .readthedocs.yaml (its keys: "Configuration file reference",
https://docs.readthedocs.io/en/stable/config-file/v2.html, read 2026-11-26): mkdocs.yml, the ``docs`` extra,
warnings as errors, on the Python that CI runs (.ci/run), as ``nox -s docs`` builds it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import docsite
from tfcloud.config.docsite import SITE_URL, page

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = docsite.ROOT
_ADDRESS = re.compile(r"https?://tfcloud\.readthedocs\.io[^\s\"'`<>()\[\]{}|\\]*")
_TRAILING = ".,;:!?"


def _addresses(text: str) -> Iterator[tuple[int, str]]:
    """(line offset, address) for each address of the site in ``text``, without a sentence's last stop."""
    for match in _ADDRESS.finditer(text):
        yield text.count("\n", 0, match.start()), match[0].rstrip(_TRAILING)


def _page_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names that are ``tfcloud.config.docsite.page`` in this module, and the names bound to
    ``tfcloud.config.docsite``."""
    functions, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "tfcloud.config.docsite":
            functions |= {alias.asname or alias.name for alias in node.names if alias.name == "page"}
        elif isinstance(node, ast.ImportFrom) and node.module == "tfcloud.config":
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "docsite"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname for alias in node.names if alias.name == "tfcloud.config.docsite" and alias.asname}
    return functions, modules


def python_links(path: Path, source: str) -> list[tuple[str, str]]:
    """(where, address) for each site address in a module's strings and each ``page(...)`` call's result, by
    line; a call this cannot evaluate comes as (where, a sentence that says so), which no address matches."""
    tree = ast.parse(source, filename=str(path))
    functions, modules = _page_names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(node.lineno + offset, address) for offset, address in _addresses(node.value)]
        elif isinstance(node, ast.Name) and node.id == "SITE_URL" and path.name != "docsite.py":
            found.append((node.lineno, "SITE_URL used directly: make the address with tfcloud.config.docsite.page()"))
        elif isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id in functions)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "page"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in modules)):
            literal = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
            keywords = {keyword.arg: keyword.value.value for keyword in node.keywords
                        if isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str)}
            if len(literal) == len(node.args) and len(keywords) == len(node.keywords) and None not in keywords:
                found.append((node.lineno, page(*literal, **keywords)))  # type: ignore[arg-type]
            else:
                found.append((node.lineno, "page() with an argument that is not a literal string: no test can tell "
                                           "where it lands"))
    return [(f"{path}:{line}", address) for line, address in sorted(found)]


def _text_files() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))
    for folder in (ROOT / "tfcloud", ROOT / "templates"):
        yield from sorted(path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts)


def links() -> list[tuple[str, str]]:
    """(where, address) for every link to the site that the package, the README and the docs give."""
    found = []
    for path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a picture, a font
            continue
        where = path.relative_to(ROOT)
        if path.suffix == ".py":
            found += python_links(where, text)
        else:
            found += [(f"{where}:{line + 1}", address) for line, address in _addresses(text)]
    return found


@pytest.fixture(scope="module")
def site() -> docsite.Site:
    return docsite.load()


def test_the_links_are_found() -> None:
    """Guards the collection itself: literal addresses, page() calls (in f-strings, imported inside a function),
    the generated flags module, templates' and the docs' addresses."""
    found = links()
    addresses = {address for _, address in found}
    assert page("architecture", "adding-a-target") in addresses  # tfcloud/cli/_options.py
    assert page("notebooks") in addresses and page("machines") in addresses  # f-strings; machines.py's lazy import
    places = {where.partition(":")[0] for where, address in found if address.startswith(SITE_URL)}
    assert {"tfcloud/cli/_target_flags.py", "docs/cli.md", "tfcloud/flow/settings.py"} <= places, places
    assert len(found) >= 20, found


def test_every_link_lands_on_a_page_and_a_heading(site: docsite.Site) -> None:
    broken = [f"{where}: {address}: {why}" for where, address in links() if (why := site.problem(address))]
    assert not broken, "links to the docs site that land nowhere:\n" + "\n".join(broken)


def test_the_check_refuses_a_missing_page_and_a_missing_heading(site: docsite.Site) -> None:
    assert site.problem(SITE_URL + "no-such-page/") == \
        "no page: neither docs/no-such-page.md nor docs/no-such-page/index.md exists"
    assert site.problem(page("ray", "no-such-heading")) == "no heading #no-such-heading in docs/ray.md"
    assert site.problem(page("ray", "")) is None and site.problem(SITE_URL) is None
    assert site.problem(page("ray", "output-directory-and-restarts")) is None
    assert site.problem(page("reference")) is None  # docs/reference/index.md
    assert site.problem(page("reference/errors", "tfcloud.errors")) is None  # an object mkdocstrings renders


@pytest.mark.parametrize(("address", "why"), [
    (SITE_URL + "ray", "'ray' is not a page's address"),
    (SITE_URL + "ray.md", "'ray.md' is not a page's address"),
    (SITE_URL + "ray/index.html", "'ray/index.html' is not a page's address"),
    ("https://tfcloud.readthedocs.io/en/stable/ray/", "not on the site: expected an address starting " + SITE_URL),
    (SITE_URL + "ray/?q=1", "has a query"),
    (SITE_URL + "ray/#", "no heading # in docs/ray.md"),
])
def test_the_check_refuses_an_address_page_does_not_make(site: docsite.Site, address: str, why: str) -> None:
    assert (site.problem(address) or "").startswith(why)


def test_a_page_left_out_of_the_nav_is_refused(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nsite_url: https://t.example/\nnav:\n  - Home: index.md\n",
                                         encoding="utf-8")
    site = docsite.load(tmp_path)
    assert site.problem("https://t.example/orphan/") == "docs/orphan.md is not in mkdocs.yml's nav"
    assert site.problem("https://t.example/#home") is None


def test_a_custom_slugify_is_refused_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text(
        "site_url: https://t.example/\nnav: []\nmarkdown_extensions:\n  - toc:\n"
        "      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=re.escape("is not one tests/docsite.py knows")):
        docsite.load(tmp_path)


@pytest.mark.parametrize(("markdown", "anchors"), [
    ("## Restarts: `--max-restarts N`", {"restarts-max-restarts-n"}),
    ("## The `max_restarts` option", {"the-max_restarts-option"}),  # a code span keeps its underscores
    ("## Some *emphasis*, __strong__ and snake_case", {"some-emphasis-strong-and-snake_case"}),
    ("### Training ([Configure compute](https://cloud.google.com/x), read 2026-11-26)",
     {"training-configure-compute-read-2026-11-26"}),
    ("### Local Docker engine — `tfcloud.image.builders.docker.DockerBuilder`",
     {"local-docker-engine-tfcloudimagebuildersdockerdockerbuilder"}),
    ("# Usage\n## Usage\n## Usage", {"usage", "usage_1", "usage_2"}),
    ("## Named {#my-id}\n## Also named { #other .cls }", {"my-id", "other"}),
    ("```\n# not a heading\n```\n    ```python\n    # nor this\n    ```\n## After", {"after"}),
    ("Setext\n======\n\nText\n\n- item\n---", {"setext", "-item"}),  # Python-Markdown's setext wins over a list
    ("##NoSpace\n## C#\nA paragraph\n#hashtag line\n  ## indented is text", {"nospace", "c", "hashtag-line"}),
    ("## a -- b _c_ \\_d\\_ x_y_z **\n## `a` `` b`c ``", {"a-b-c-_d_-x_y_z", "a-bc"}),
    ("!!! note\n\n    ## In an admonition\n\n## Usage_1\n## Usage\n## Usage", {"in-an-admonition", "usage_1", "usage",
                                                                          "usage_2"}),
    ("## Caf\u00e9 &amp; <b>bold</b> C++", {"cafe-bold-c"}),
    ("::: tfcloud.sdk.submit\n    options:\n      heading_level: 3", {"tfcloud.sdk.submit"}),
])
def test_anchors_are_the_ones_mkdocs_makes(tmp_path: Path, markdown: str, anchors: set[str]) -> None:
    """Read against the site that mkdocs 1.6.1 with Python-Markdown 3.11 built from these docs (2026-11-26):
    every heading id of every page matched."""
    path = tmp_path / "page.md"
    path.write_text(markdown + "\n", encoding="utf-8")
    site = docsite.Site(url="https://t.example/", docs=tmp_path, nav=frozenset({"page.md"}))
    assert site.anchors(path) == anchors


def test_page_calls_are_read_and_checked(tmp_path: Path, site: docsite.Site) -> None:
    """A page() call from tfcloud.config.docsite (however imported) is checked; a function of that name from
    elsewhere is not a link; a call with a variable is refused, since nothing could check it."""
    source = (
        "from tfcloud.config.docsite import page\nfrom tfcloud.config import docsite as d\n"
        "from tfcloud.emulator._grpc import page as p\n"
        "A = page('ray', 'no-such-heading')\nB = f\"see {d.page('no-such-page')}\"\nC = p([], None, None)\n"
        "D = page(NAME)\nE = 'https://tfcloud.readthedocs.io/en/latest/ray/#restarts.'\n")
    found = python_links(Path("m.py"), source)
    assert [where for where, _ in found] == ["m.py:4", "m.py:5", "m.py:7", "m.py:8"]
    assert [site.problem(address) for _, address in found] == [
        "no heading #no-such-heading in docs/ray.md",
        "no page: neither docs/no-such-page.md nor docs/no-such-page/index.md exists",
        "not on the site: expected an address starting " + SITE_URL,
        "no heading #restarts in docs/ray.md"]


# --- publishing: Read the Docs builds what `nox -s docs` builds --------------------------------------------------
#: The keys of a v2 configuration file ("Configuration file reference", Supported settings) and build.os'
#: options (read 2026-11-26); Read the Docs fails a build on any other key.
RTD_KEYS = {"version", "formats", "python", "conda", "build", "sphinx", "mkdocs", "submodules", "search"}
RTD_OS = {"ubuntu-20.04", "ubuntu-22.04", "ubuntu-24.04", "ubuntu-lts-latest"}


def _ci_python() -> str:
    found = re.search(r"^PYTHON_VERSION=(\d+\.\d+)$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, ".ci/run no longer says PYTHON_VERSION=X.Y (the Python CI runs)"
    return found[1]


def test_read_the_docs_builds_the_site_as_nox_does() -> None:
    config: dict[str, Any] = docsite.read_yaml(ROOT / ".readthedocs.yaml")
    assert config["version"] == 2 and set(config) <= RTD_KEYS, config
    assert config["mkdocs"] == {"configuration": "mkdocs.yml", "fail_on_warning": True}  # = mkdocs build --strict
    assert (ROOT / config["mkdocs"]["configuration"]).is_file()
    # The docs extra, as `nox -s docs` installs it (pip install ".[docs]": the package and that extra).
    assert config["python"] == {"install": [{"method": "pip", "path": ".", "extra_requirements": ["docs"]}]}
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(requirement.startswith("mkdocs>") for requirement in extras["docs"]), extras["docs"]
    assert '["optional-dependencies"]["docs"]' in (ROOT / "noxfile.py").read_text(encoding="utf-8")
    # The Python CI runs: the same interpreter version builds the published site.
    assert config["build"]["os"] in RTD_OS and config["build"]["tools"] == {"python": _ci_python()}, config["build"]


def test_the_published_site_is_where_the_links_point() -> None:
    """Read the Docs serves a project's default version at https://PROJECT.readthedocs.io/en/latest/; mkdocs.yml's
    site_url and tfcloud.config.docsite.SITE_URL are that address, and the docs say so."""
    assert docsite.load().url == SITE_URL == "https://tfcloud.readthedocs.io/en/latest/"
    for doc in ("README.md", "docs/index.md", "docs/development.md"):
        assert SITE_URL in (ROOT / doc).read_text(encoding="utf-8"), doc
