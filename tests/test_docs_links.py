"""Every link to the docs that a user is given lands on a page and on a heading of that page, and the site is
configured the way CI builds it, for the day it is published.

tfcloud prints its links as ``tfcloud docs PAGE#SECTION`` (``tfcloud.config.docsite.page("name", "anchor")``), which
the docs shipped in the package answer (tfcloud.config.docpages). The links are the ``page(...)`` calls with
literal arguments and the ``tfcloud docs NAME`` mentions in the package's strings (help texts, hints, error
messages, docstrings: every ``.py`` file, read with ``ast``, and the templates), README.md and docs/; each is
resolved through ``tfcloud docs``' own lookup. No address of the unpublished site (tfcloud.readthedocs.io) is left
in the package; README.md and docs/ may name it as not yet published, and such an address must still name a page
in mkdocs.yml's nav and, with ``#anchor``, a heading of that page as mkdocs makes its anchor (tests/docsite.py).

Read the Docs will publish the site from .readthedocs.yaml (its keys: "Configuration file reference",
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
from tfcloud.config import docpages
from tfcloud.config.docsite import page
from tfcloud.errors import ValidationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = docsite.ROOT
#: Where Read the Docs will publish the site (mkdocs.yml's site_url); not published yet.
SITE_URL = "https://tfcloud.readthedocs.io/en/latest/"
_ADDRESS = re.compile(r"https?://tfcloud\.readthedocs\.io[^\s\"'`<>()\[\]{}|\\]*")
_COMMAND = re.compile(r"tfcloud docs [a-z][\w/.-]*(?:#[\w.-]+)?")
_TRAILING = ".,;:!?"


def _url(name: str, anchor: str = "") -> str:
    """The site's address of a page (mkdocs' use_directory_urls), at ``anchor`` if given."""
    return f"{SITE_URL}{name}/" + (f"#{anchor}" if anchor else "")


def _addresses(text: str) -> Iterator[tuple[int, str]]:
    """(line offset, address) for each address of the site in ``text``, without a sentence's last stop."""
    for match in _ADDRESS.finditer(text):
        yield text.count("\n", 0, match.start()), match[0].rstrip(_TRAILING)
    for match in _COMMAND.finditer(text):
        yield text.count("\n", 0, match.start()), match[0].rstrip(_TRAILING)


def problem(link: str, site: docsite.Site) -> str | None:
    """Why a link lands nowhere (None: it lands): ``tfcloud docs PAGE#SECTION`` through the command's own lookup,
    an address through the site's; anything else is a sentence that says why it cannot be checked."""
    if link.startswith("tfcloud docs "):
        try:
            docpages.find(link.removeprefix("tfcloud docs "))
        except ValidationError as exc:
            return str(exc)
        return None
    if link.startswith("http"):
        return site.problem(link)
    return link


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
    """(where, link) for each site address and ``tfcloud docs NAME`` in a module's strings and each ``page(...)``
    call's result, by line; a call this cannot evaluate comes as (where, a sentence that says so), which no
    address matches."""
    tree = ast.parse(source, filename=str(path))
    functions, modules = _page_names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(node.lineno + offset, address) for offset, address in _addresses(node.value)]
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
    """(where, link) for every link to the docs that the package, the README and the docs give."""
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
    assert "tfcloud docs tuning#early-stopping" in addresses  # a docstring's mention (tfcloud/sdk.py)
    places = {where.partition(":")[0] for where, address in found if address.startswith("tfcloud docs ")}
    assert {"tfcloud/cli/_target_flags.py", "docs/cli.md", "tfcloud/flow/settings.py", "docs/ray.md"} <= places, \
        places
    assert len(found) >= 20, found


def test_every_link_lands_on_a_page_and_a_heading(site: docsite.Site) -> None:
    broken = [f"{where}: {address}: {why}" for where, address in links() if (why := problem(address, site))]
    assert not broken, "links to the docs that land nowhere:\n" + "\n".join(broken)


def test_the_package_links_only_to_tfcloud_docs() -> None:
    """The site is not published (anyone could register its name): nothing tfcloud prints points there."""
    shipped = [(where, link) for where, link in links() if where.startswith(("tfcloud/", "templates/"))]
    assert shipped and all(link.startswith("tfcloud docs ") for _, link in shipped), \
        [(where, link) for where, link in shipped if not link.startswith("tfcloud docs ")]
    assert page("ray") == "tfcloud docs ray" and page("data", "secrets") == "tfcloud docs data#secrets"


def test_the_lookup_finds_the_anchors_the_site_makes(site: docsite.Site) -> None:
    """``tfcloud docs PAGE#SECTION`` and the site's ``PAGE/#SECTION`` name one heading: mkdocs.yml's toc settings
    are the ones tfcloud.config.docpages makes anchors with, and every page's anchors agree."""
    assert (site.separator, site.keep_unicode) == ("-", False)
    for known in docpages.pages():
        assert f"{known.name}.md" in site.nav, known.name  # every page shipped is one of the site's
        markdown = known.path.read_text(encoding="utf-8")
        assert {anchor for anchor, _ in docpages.anchored(markdown)} == site.anchors(known.path), known.name
        for anchor, _ in docpages.anchored(markdown):
            assert docpages.find(f"{known.name}#{anchor}").anchor == anchor


def test_a_broken_link_is_reported(site: docsite.Site) -> None:
    assert problem("tfcloud docs ray", site) is None and problem("tfcloud docs ray#output-directory-and-restarts",
                                                                 site) is None
    assert (problem("tfcloud docs rey", site) or "").startswith("Invalid `page`: expected one of: index, ")
    assert (problem("tfcloud docs ray#nope", site) or "").startswith("Invalid `section of ray`: expected one of: ")


def test_the_check_refuses_a_missing_page_and_a_missing_heading(site: docsite.Site) -> None:
    assert site.problem(SITE_URL + "no-such-page/") == \
        "no page: neither docs/no-such-page.md nor docs/no-such-page/index.md exists"
    assert site.problem(_url("ray", "no-such-heading")) == "no heading #no-such-heading in docs/ray.md"
    assert site.problem(_url("ray", "")) is None and site.problem(SITE_URL) is None
    assert site.problem(_url("ray", "output-directory-and-restarts")) is None
    assert site.problem(_url("reference")) is None  # docs/reference/index.md
    assert site.problem(_url("reference/errors", "tfcloud.errors")) is None  # an object mkdocstrings renders


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
    assert [(problem(address, site) or "").partition(",")[0] for _, address in found] == [
        "Invalid `section of ray`: expected one of: ray-clusters-ray-address",
        "Invalid `page`: expected one of: index",
        "page() with an argument that is not a literal string: no test can tell where it lands",
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
    site_url is that address, and the docs say it is not published yet."""
    assert docsite.load().url == SITE_URL == "https://tfcloud.readthedocs.io/en/latest/"
    for doc in ("README.md", "docs/index.md", "docs/development.md"):
        text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
        assert SITE_URL in text and "not yet published" in text, doc
