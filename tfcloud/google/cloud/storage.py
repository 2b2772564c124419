"""Cloud Storage clients for the places outside the wing that read or write objects: a job's outputs (on this
machine), its data sets (in a replica) and the data store (at submission). One rule for where they go: the
emulator at ``STORAGE_EMULATOR_HOST`` with anonymous credentials (the ``gcloud`` SDK's own variable), else
Google's endpoint with Application Default Credentials. ``google-cloud-storage`` is imported when a client is
made, never when this module is.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

__all__ = ["client", "upload_if_absent"]


def client() -> Any:
    """A ``google.cloud.storage.Client``: the emulator's when ``STORAGE_EMULATOR_HOST`` is set (the project is
    ``GOOGLE_CLOUD_PROJECT``, else ``tfcloud``), else Google's."""
    import google.cloud.storage as storage

    endpoint = os.environ.get("STORAGE_EMULATOR_HOST")
    if endpoint:
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project=os.environ.get("GOOGLE_CLOUD_PROJECT") or "tfcloud",
                              credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                              client_options={"api_endpoint": endpoint})
    return storage.Client()


def upload_if_absent(blob: Any, data: Any, *, size: int, content_type: str) -> None:
    """Upload ``data`` (a binary file: what ``read`` returns) as ``blob`` only if no object has its name
    (``if_generation_match=0``); one stored meanwhile (``PreconditionFailed``) is kept: content-addressed
    objects hold the same bytes."""
    from google.api_core import exceptions

    with contextlib.suppress(exceptions.PreconditionFailed):
        blob.upload_from_file(data, size=size, if_generation_match=0, content_type=content_type)
