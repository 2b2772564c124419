"""Secrets a replica gets at start (``--secret NAME=REF``), by reference only.

A job names each secret by where its value is kept, never by the value:

- ``projects/P/secrets/S/versions/V`` (or ``projects/P/locations/L/secrets/S/versions/V``): a Secret Manager
  secret version, read in the replica with its own credentials (on Vertex AI: the job's service account);
- ``env:VAR``: the variable VAR of the environment the replica starts from (local and Ray only);
- ``file:PATH``: the file PATH where the replica runs (local and Ray only; a relative path is made absolute).

The references travel to the replicas in one variable, ``TFCLOUD_SECRET_REFS`` (JSON, NAME -> reference), so only
the references are ever in a request, a plan, a job's records or an image. The launcher
(``templates/launcher.py.j2``) resolves them before the user's script runs, sets each NAME in the replica's
environment, and masks each value in what the replica prints (``sys.stdout``/``sys.stderr``), so the terminal,
the logs tfcloud shows and the dashboard show ``****`` in its place. Output that bypasses Python's streams (a
subprocess, C code writing to the file descriptors) is not masked.

Secret Manager's names, as its API reference gives them (``AccessSecretVersionRequest.name``: "projects/*/
secrets/*/versions/* or projects/*/locations/*/secrets/*/versions/*", ``versions/latest`` an alias to the most
recent version; ``CreateSecretRequest.secret_id``: "at most 255 characters ... letters, numerals, the hyphen and
underscore"; https://cloud.google.com/python/docs/reference/secretmanager/latest/, read 2026-11-26). A version is
a number or ``latest``: version aliases are refused here (the reading that refuses before a paid build).

:func:`env_warnings` names each ``--env`` value that looks like a credential (the token shapes
:mod:`tfcloud.image.secretscan` sniffs in files), with the ``--secret`` that keeps it out of the request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from tfcloud.errors import ValidationError

__all__ = ["RESERVED_ENV", "SECRETS_VAR", "env_warnings", "job_secrets", "parse_secrets", "secret_env",
           "shown_env_names"]

#: The replica's variable that holds the references (JSON: NAME -> reference).
SECRETS_VAR = "TFCLOUD_SECRET_REFS"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROJECT = r"(?:[a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]{1,20})"
_SECRET_ID = r"[A-Za-z0-9_-]{1,255}"
_LOCATION = r"[a-z0-9-]{1,63}"
SECRET_MANAGER_REF = re.compile(
    rf"^projects/{_PROJECT}(?:/locations/{_LOCATION})?/secrets/{_SECRET_ID}/versions/(?:[1-9][0-9]{{0,18}}|latest)$")
_EXPECTED = ("a Secret Manager version (projects/PROJECT/secrets/SECRET/versions/VERSION, VERSION a number or "
             "latest), env:VARIABLE or file:PATH")
_EXPECTED_REMOTE = "a Secret Manager version (projects/PROJECT/secrets/SECRET/versions/VERSION or .../latest)"
#: The variables tfcloud sets in every replica: ``--env`` may not set them (:mod:`tfcloud.flow.validate`).
RESERVED_ENV = ("TF_CONFIG", "TFCLOUD_REMOTE", "TFCLOUD_JOB_ID", "TFCLOUD_REPLICA", "TFCLOUD_ATTEMPT", SECRETS_VAR)
#: A secret may not take those names either, nor the ones a replica's Python needs as they are.
_RESERVED = (*RESERVED_ENV, "PATH", "PYTHONPATH", "HOME")


def parse_secrets(value: object, *, local_sources: bool, target: str, env: Mapping[str, str] | None = None,
                  here: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """Check ``--secret`` (``run(secrets={NAME: REF})``) and return NAME -> reference (``file:`` paths made
    absolute). ``local_sources``: whether the target's replicas can read ``env:`` and ``file:`` sources (they
    run where tfcloud does, or on a cluster the user starts them on); ``env``: the job's ``--env``, whose names a
    secret may not take too; ``here``: the environment the replicas start from, when they start from this
    process's (local): an ``env:`` source's variable must be set in it."""
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValidationError("secrets", "a dict of environment variable names to secret references", value,
                              hint="--secret NAME=projects/P/secrets/S/versions/latest (repeatable).")
    out: dict[str, str] = {}
    for name, ref in value.items():
        field = f"secrets[{name!r}]"
        if not _NAME.match(name):
            raise ValidationError("secrets", "an environment variable name (letters, digits, _; not first a digit)",
                                  name)
        if name in _RESERVED:
            raise ValidationError("secrets", "names other than " + ", ".join(_RESERVED) + " (tfcloud sets them)",
                                  name)
        if env is not None and name in env:
            raise ValidationError(field, "a name that --env does not set too", name,
                                  hint=f"Leave {name} out of --env: the secret sets it.")
        if SECRET_MANAGER_REF.match(ref):
            out[name] = ref
            continue
        kind, _, rest = ref.partition(":")
        if kind not in ("env", "file") or not rest:
            raise ValidationError(field, _EXPECTED, _shown(ref),
                                  hint="Create one with `gcloud secrets create SECRET --data-file=-` and pass "
                                       f"--secret {name}=projects/PROJECT/secrets/SECRET/versions/latest.")
        if not local_sources:
            raise ValidationError(field, f"{_EXPECTED_REMOTE} on {target} (its replicas run on Google's machines, "
                                  f"where your {'variables' if kind == 'env' else 'files'} are not)", _shown(ref),
                                  hint="Store the value in Secret Manager (`gcloud secrets create SECRET "
                                       "--data-file=-`), grant the job's service account "
                                       "roles/secretmanager.secretAccessor on it, and pass its version.")
        if kind == "env":
            if not _NAME.match(rest):
                raise ValidationError(field, "env:VARIABLE with a variable name", _shown(ref))
            if here is not None and rest not in here:
                raise ValidationError(field, f"env:VARIABLE naming a variable set here (the {target} target's "
                                      "replicas start from this environment)", _shown(ref),
                                      hint=f"Set it first (`export {rest}=...`), or pass the secret as "
                                           f"--secret {name}=file:PATH.")
            out[name] = ref
        else:
            path = Path(rest).expanduser()
            if not path.is_file():
                raise ValidationError(field, "file:PATH naming a readable file", _shown(ref),
                                      hint="Check the path; a relative one is read from the current directory.")
            out[name] = f"file:{path.resolve()}"
    return MappingProxyType(out)


def job_secrets(value: object, *, target: str, local_sources: bool, from_here: bool, env: Mapping[str, str],
                warn: bool) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """The gate's step for ``--secret``: the checked references (:func:`parse_secrets`) and ``env`` with the
    variable that carries them, by what the ``target`` declares (``local_sources``: it reads ``env:`` and
    ``file:`` references, :attr:`Target.local_sources`; ``from_here``: from this machine, so an ``env:``
    variable must be set here, :attr:`Target.runs_here`); ``warn``: log :func:`env_warnings` for ``env``
    (a submission, not a plan)."""
    import logging
    import os

    refs = parse_secrets(value, local_sources=local_sources, target=target, env=env,
                         here=os.environ if from_here else None)
    if warn:
        for warning in env_warnings(env):
            logging.getLogger("tfcloud").warning(warning)
    return refs, MappingProxyType({**env, **secret_env(refs)})


def _shown(ref: str) -> str:
    """A wrong reference as shown in an error: it may be the value itself, pasted by mistake."""
    return ref if len(ref) < 8 or ref.startswith(("projects/", "env:", "file:")) else f"<{len(ref)} characters>"


def secret_env(secrets: Mapping[str, str]) -> Mapping[str, str]:
    """The replica's variables that carry ``secrets`` (references only): ``{TFCLOUD_SECRET_REFS: JSON}``, or none."""
    if not secrets:
        return {}
    return {SECRETS_VAR: json.dumps(dict(sorted(secrets.items())), separators=(",", ":"))}


_CREDENTIAL_NAME = re.compile(r"(?i)(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|credential|auth)")
_MIN_CREDENTIAL = 8


def env_warnings(env: Mapping[str, str]) -> list[str]:
    """A warning for each ``--env`` variable whose value looks like a credential: a token with a known shape
    (:mod:`tfcloud.image.secretscan`'s), a private key, a URL with a password, or a long value under a credential's
    name (``*TOKEN*``, ``*PASSWORD*``, ``*API_KEY*``...). The value itself is never shown."""
    from tfcloud.image.secretscan import looks_like_credential

    out = []
    for name, value in env.items():
        if name == SECRETS_VAR:
            continue
        what = looks_like_credential(value)
        if what is None and _CREDENTIAL_NAME.search(name) and len(value) >= _MIN_CREDENTIAL \
                and not value.startswith(("$", "/", "gs://")):
            what = "a credential, by its name"
        if what is not None:
            out.append(f"--env {name} looks like {what}: its value would be in clear in the job's request, plan "
                       f"and records. Pass it with --secret {name}=env:{name} (local, Ray) or --secret "
                       f"{name}=projects/PROJECT/secrets/SECRET/versions/latest (Secret Manager) instead.")
    return out


def shown_env_names(env: Mapping[str, str]) -> list[str]:
    """The names of the variables ``--env`` sets, as every view of a job shows them (never their values; the
    secrets' carrier, :data:`SECRETS_VAR`, left out: the secrets are listed by reference)."""
    return sorted(name for name in env if name != SECRETS_VAR)
