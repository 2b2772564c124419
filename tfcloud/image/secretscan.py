"""Secrets kept out of a build context, by name (:data:`SECRET_PATTERNS`) and by content
(:func:`sniff_secret`: private keys, JSON keys of any size, token-shaped lines in rc files, URLs with credentials
in requirements files and pip's configuration).

:func:`url_credentials` finds a URL whose userinfo holds a credential (``https://alice:S3cret@host``,
``https://TOKEN@host``) and shows it masked, never with the secret: :mod:`tfcloud.entry.requirements` and
:mod:`tfcloud.entry.pipmagic` refuse such a requirement or pip option before anything is uploaded or built, and the
context keeps any other requirements file that holds one out of images and packages.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from tfcloud.image.gitignore import gitignore_spec

__all__ = ["CREDENTIALS_HINT", "SECRET_PATTERNS", "SNIFF_SIZE", "looks_like_credential", "secret_reason",
           "secret_spec", "sniff_secret", "url_credentials"]

#: Never in a context unless a ``!path`` line in ``.dockerignore`` names it: (gitwildmatch line, what it is).
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    (".env", "environment file"),
    (".env.*", "environment file"),
    (".envrc", "environment file"),
    ("*.pem", "private key or certificate"),
    ("*.key", "private key"),
    ("*.ppk", "private key"),
    ("*.p12", "key store"),
    ("*.pfx", "key store"),
    ("*.jks", "key store"),
    ("*.keystore", "key store"),
    ("id_rsa", "SSH private key"),
    ("id_dsa", "SSH private key"),
    ("id_ecdsa", "SSH private key"),
    ("id_ed25519", "SSH private key"),
    (".ssh/", "SSH directory"),
    (".gnupg/", "GPG keys"),
    (".netrc", "credentials file"),
    ("_netrc", "credentials file"),
    (".pgpass", "credentials file"),
    (".pypirc", "credentials file"),
    (".boto", "credentials file"),
    (".git-credentials", "git credentials"),
    (".htpasswd", "password file"),
    (".vault-token", "token"),
    ("token", "token"),
    ("token.txt", "token"),
    ("token.json", "OAuth token"),
    ("*.token", "token"),
    ("*_token.txt", "token"),
    ("*-token.txt", "token"),
    ("credentials.json", "OAuth client or credentials"),
    ("client_secret*.json", "OAuth client secret"),
    ("secrets.yaml", "secrets file"),
    ("secrets.yml", "secrets file"),
    ("secrets.json", "secrets file"),
    ("secrets.toml", "secrets file"),
    ("secrets.env", "secrets file"),
    ("secret.yaml", "secrets file"),
    ("secret.yml", "secrets file"),
    ("secret.json", "secrets file"),
    ("*.tfstate", "Terraform state"),
    ("*.tfstate.*", "Terraform state"),
    (".terraform/", "Terraform working directory"),
    (".kube/", "Kubernetes credentials"),
    ("kubeconfig", "Kubernetes credentials"),
    (".aws/", "AWS credentials"),
    (".azure/", "Azure credentials"),
    ("**/.docker/config.json", "Docker credentials"),
    ("**/.config/gh/hosts.yml", "GitHub CLI token"),
    ("**/.config/gcloud/", "gcloud configuration"),
    (".gcloud/", "gcloud configuration"),
    ("**/gcloud/credentials.db", "gcloud credentials"),
    ("**/gcloud/access_tokens.db", "gcloud credentials"),
    ("**/gcloud/legacy_credentials/", "gcloud credentials"),
    ("application_default_credentials.json", "gcloud credentials"),
)

#: Templates that look like secrets by name but hold none.
_SECRET_ALLOWED = (".env.example", ".env.sample", ".env.template", ".env.dist")

#: Every file up to this size is also checked by content (private keys, JSON keys); JSON files at any size.
SNIFF_SIZE = 64 * 1024
#: rc files (``.npmrc``, ``.yarnrc``...) up to this size are checked for token-shaped lines.
_RC_SNIFF_SIZE = 1024 * 1024
_PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
#: JSON key files, by their markers: (what it is, the markers that must all appear); also when the JSON is
#: itself a string inside another JSON document (``\"type\": \"service_account\"``).
_JSON_KEYS: tuple[tuple[str, tuple[re.Pattern[bytes], ...]], ...] = (
    ("service-account key", (re.compile(rb'\\?"type\\?"\s*:\s*\\?"service_account\\?"'),)),
    ("OAuth credentials", (re.compile(rb'\\?"type\\?"\s*:\s*\\?"authorized_user\\?"'),
                           re.compile(rb'\\?"refresh_token\\?"'))),
    ("OAuth client secret", (re.compile(rb'\\?"client_secret\\?"\s*:\s*\\?"[^"\\]'),)),
)
#: Where a marker may straddle two chunks of a large file: this much of the previous chunk is searched again.
_OVERLAP = 4096
_RC_NAMES = re.compile(
    r"^\.[\w.-]*rc(?:\.ya?ml)?$|^(?:pip\.conf|pip\.ini|\.profile|\.bash_profile|\.zprofile|\.Renviron)$"
)
#: A line that sets a token, password or key to a literal value (``${VAR}`` references are fine).
_TOKEN_LINE = re.compile(
    rb"(?im)^[ \t]*(?:export[ \t]+)?[\"']?[^\s=#\"']{0,200}?(?:_auth|token|secret|passw(?:or)?d|api[_-]?key|"
    rb"access[_-]?key)[^\s=:\"']{0,100}[\"']?[ \t]*[=:][ \t]*[\"']?[^\s\"'$]{8}"
)
#: Token formats with a recognisable prefix (GitHub, GitLab, Slack, AWS, npm, Google API keys and tokens).
_TOKEN_SHAPE = re.compile(
    rb"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|"
    rb"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}|"
    rb"ya29\.[0-9A-Za-z_-]{20,})"
)


#: A URL's userinfo (``scheme://USERINFO@host``): what pip sends as Basic auth to an index or a VCS host. The scheme
#: starts where no scheme character comes before it: without that look-behind the engine tries the scheme from
#: every position of a long word without ``://`` (a 131 kB ``--env`` value took a minute).
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<userinfo>[^/\s@?#]+)@(?P<host>[^/\s?#]*)",
                           re.ASCII)
#: ``${NAME}``: an environment variable pip expands where it runs (pip's "Requirements File Format", "Using
#: Environment Variables", https://pip.pypa.io/en/stable/reference/requirements-file-format/, read 2026-11-26).
_ENV_REFERENCE = re.compile(r"\$\{[A-Z0-9_]+\}", re.ASCII)
#: Files read for URLs with credentials: requirements and constraints files, pip's configuration, and the project
#: files that name package indexes (``pyproject.toml``: ``[tool.uv.index]``, ``[tool.tfcloud] env``...).
_PIP_FILES = re.compile(r"(?i)^(?:[^/]*(?:requirements|constraints)[^/]*\.(?:txt|in)|pip\.(?:conf|ini)|"
                        r"pyproject\.toml|setup\.cfg|Pipfile|uv\.toml|\.pdm\.toml)$")
#: What to do instead of writing a password into a requirement or a pip option.
CREDENTIALS_HINT = (
    "Keep credentials out of requirements and pip options: write the URL without them and let pip find them "
    "where it runs, with its keyring support (for an Artifact Registry Python repository, "
    "keyrings.google-artifactregistry-auth uses the job's service account), or with ${VARIABLE} references "
    "that pip expands from the environment (https://${PIP_USER}:${PIP_PASSWORD}@host/simple), their values "
    "given to the replicas at runtime, never written into the project.")


def url_credentials(text: str) -> str | None:
    """The first URL in ``text`` whose userinfo holds a credential (a password, or a user name that may be a
    token), shown as ``scheme://***@host``; None when there is none. ``${VAR}`` references are not credentials,
    nor a bare user name in an SSH URL (``git+ssh://git@github.com/...``)."""
    for match in _URL_USERINFO.finditer(text):
        info = match["userinfo"]
        if not _ENV_REFERENCE.sub("", info).replace(":", ""):
            continue  # ${USER}:${PASSWORD}: filled in where pip runs
        if ":" not in info and match["scheme"].lower().endswith("ssh"):
            continue  # git+ssh://git@host: the SSH user name, authenticated by a key
        return f"{match['scheme']}://***@{match['host']}"
    return None


@functools.lru_cache(maxsize=1)
def secret_spec() -> Any:
    """The deny-list as one gitwildmatch spec (its pattern indexes are :data:`SECRET_PATTERNS`'s)."""
    return gitignore_spec(p for p, _ in SECRET_PATTERNS)


def secret_reason(rel: str, is_dir: bool, secret_spec: Any, reasons: list[str],
                   allowed: frozenset[int] = frozenset()) -> str | None:
    """The deny-list's reason for ``rel``; None when no pattern (other than the ``allowed`` ones) names it."""
    if rel.rsplit("/", 1)[-1] in _SECRET_ALLOWED:
        return None
    result = secret_spec.check_file(rel + "/" if is_dir else rel)
    if result.include and result.index is not None and result.index not in allowed:
        return str(reasons[result.index])
    return None


def sniff_secret(path: Path, size: int) -> str | None:
    """What secret ``path`` holds by its content, or None: a private key or a JSON key in any file up to
    64 kB and in JSON files of any size; token-shaped lines in rc files (``.npmrc``, ``.yarnrc``, ...)."""
    name = path.name
    if _PIP_FILES.match(name) and 0 < size <= _RC_SNIFF_SIZE:
        found_url = _pip_file_credentials(path)
        if found_url is not None:
            return found_url
    is_json = name.lower().endswith(".json")
    is_rc = bool(_RC_NAMES.match(name))
    if size == 0 or not (size <= SNIFF_SIZE or is_json or (is_rc and size <= _RC_SNIFF_SIZE)):
        return None
    found: set[re.Pattern[bytes]] = set()
    markers = [m for _, ms in _JSON_KEYS for m in ms]
    try:
        with open(path, "rb") as f:
            tail = b""
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                if not tail:  # a JSON document by its name or its first byte (not code that mentions one)
                    is_json = is_json or chunk.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
                text = tail + chunk
                if _PRIVATE_KEY.search(text):
                    return "private key"
                if is_rc and (_TOKEN_LINE.search(text) or _TOKEN_SHAPE.search(text)):
                    return "token in an rc file"
                if is_json:
                    found.update(m for m in markers if m not in found and m.search(text))
                for what, needed in _JSON_KEYS:
                    if all(m in found for m in needed):
                        return what
                tail = text[-_OVERLAP:]
    except OSError:
        return None
    return None


def _pip_file_credentials(path: Path) -> str | None:
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        shown = url_credentials(line)
        if shown is not None:
            return f"URL with credentials, line {number}: {shown}"
    return None


def looks_like_credential(value: str) -> str | None:
    """What credential a string value (an ``--env`` variable's) looks like, or None: a token with a known shape,
    a private key, a JSON key, or a URL with credentials."""
    data = value.encode("utf-8", "replace")
    if _PRIVATE_KEY.search(data):
        return "a private key"
    if _TOKEN_SHAPE.search(data):
        return "a token"
    if any(all(m.search(data) for m in needed) for _, needed in _JSON_KEYS):
        return "a JSON key"
    if url_credentials(value) is not None:
        return "a URL with credentials"
    return None
