"""The Vertex AI target's lines of ``tfcloud doctor`` (SkyPilot's ``Cloud.check_credentials``): credentials,
project and region (and where each came from), the staging bucket, the image registry, and, for the chosen
target, one cheap call to the endpoint (list one CustomJob: Google, or the emulator) that proves the credentials
and the project work together."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.targets._doctor import Check

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.vertex.value import VertexOptions

__all__ = ["ENDPOINT_DEADLINE_S", "checks"]

#: How long the endpoint's one call may keep retrying (the ``retry_deadline`` setting's default is 60 s).
ENDPOINT_DEADLINE_S = 10


def checks(target: VertexOptions, settings: Settings, *, needed: bool, environ: Mapping[str, str]) -> list[Check]:
    """Every line; the endpoint is called only for the chosen target (``needed``) whose credentials and project
    were found (a doctor for another target makes no call to Google)."""
    google = target.google()
    rows: list[Check] = []
    if google.emulator_host:
        rows.append(Check(name="Google credentials", ok=True,
                          found=f"not needed: the emulator at {google.emulator_host}", needed=needed))
    else:
        rows.append(_credentials(environ, needed=needed))
    source = settings.sources.get("project")
    if google.project:
        rows.append(Check(name="project", ok=True, found=f"{google.project} (from {source or 'the default'})",
                          needed=needed))
    else:
        rows.append(Check(name="project", ok=False if needed else None, found="not set",
                          fix="gcloud config set project PROJECT, or TFCLOUD_PROJECT=PROJECT", needed=needed))
    region_source = settings.sources.get("region") or "the default"
    rows.append(Check(name="region", ok=True, found=f"{google.region} (from {region_source})", needed=needed))
    if google.staging_bucket:
        rows.append(Check(name="staging bucket", ok=True, found=google.staging_bucket))
    else:
        rows.append(Check(name="staging bucket", ok=None, found="not set: jobs get no output directory "
                                                                 "(AIP_MODEL_DIR)",
                          fix="TFCLOUD_STAGING_BUCKET=gs://BUCKET (or staging_bucket in [tool.tfcloud])"))
    repository = target.repository(settings)
    if repository:
        origin = "image_repository" if settings.image_repository else "from the project and region"
        rows.append(Check(name="image registry", ok=True, found=f"{repository} ({origin})", needed=needed))
    else:
        rows.append(Check(name="image registry", ok=False if needed else None,
                          found="none: it follows from the project", fix="set the project (above), or "
                          "TFCLOUD_IMAGE_REPOSITORY=REGION-docker.pkg.dev/PROJECT/REPO", needed=needed))
    if needed and all(row.ok for row in rows[:2]):
        rows.append(_endpoint(target, settings))
    return rows


def _credentials(environ: Mapping[str, str], *, needed: bool) -> Check:
    """Application Default Credentials, as files (the endpoint's call below proves they work)."""
    name = "Google credentials"
    given = environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if given:
        if Path(given).is_file():
            return Check(name=name, ok=True, found=f"{given} (GOOGLE_APPLICATION_CREDENTIALS)", needed=needed)
        return Check(name=name, ok=False if needed else None,
                     found=f"GOOGLE_APPLICATION_CREDENTIALS names {given}, which is not a file",
                     fix="point GOOGLE_APPLICATION_CREDENTIALS at a key file, or unset it and run "
                         "gcloud auth application-default login", needed=needed)
    base = Path(environ.get("CLOUDSDK_CONFIG") or Path("~/.config/gcloud").expanduser())
    adc = base / "application_default_credentials.json"
    if adc.is_file():
        return Check(name=name, ok=True, found=f"{adc} (gcloud's application default credentials)", needed=needed)
    return Check(name=name, ok=False if needed else None, found="none found (no GOOGLE_APPLICATION_CREDENTIALS, no "
                 "application default credentials)", fix="gcloud auth application-default login", needed=needed)


def _endpoint(target: VertexOptions, settings: Settings) -> Check:
    """One ``ListCustomJobs`` of one job in the project and region: the credentials, the project, the API's
    being enabled and the network, at once (what a submission would meet first)."""
    from tfcloud.errors import TfcloudError

    name = "Vertex AI endpoint"
    where = f"the emulator at {target.emulator_host}" if target.emulator_host else "Vertex AI"
    try:
        from tfcloud.google.vertex.backend import VertexBackend
    except ImportError as exc:  # the cloud extra: its own line says how to install it
        return Check(name=name, ok=False, found=f"not checked: {exc}", fix='pip install "tfcloud[cloud]"',
                     needed=True)
    try:
        backend = VertexBackend(settings=dataclasses.replace(settings, retry_deadline=str(ENDPOINT_DEADLINE_S)),
                                target=target)
        try:
            found = backend.list(limit=1)
        finally:
            backend.close()
    except TfcloudError as exc:
        return Check(name=name, ok=False, found=f"{where} refused a call: {exc.message}",
                     fix=exc.hint or "gcloud auth application-default login, and check the project", needed=True)
    seen = "no jobs yet" if not found else f"newest job {found[0].job_id}"
    return Check(name=name, ok=True, found=f"{where} answered for projects/{target.project}/locations/"
                                          f"{target.location} ({seen})", needed=True)
