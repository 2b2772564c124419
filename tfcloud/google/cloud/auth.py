"""Google's Application Default Credentials, checked before anything is built or submitted."""

from __future__ import annotations

from tfcloud.errors import ConfigurationError

__all__ = ["check_credentials"]


def check_credentials(*, emulator_host: str | None) -> None:
    """Google's Application Default Credentials must exist (not needed against the emulator at
    ``emulator_host``). Raises :class:`ConfigurationError` with the command that fixes it."""
    if emulator_host:
        return
    from tfcloud.errors import require

    require("google.auth", feature="Running on Vertex AI", extra="vertex")
    import google.auth
    from google.auth.exceptions import GoogleAuthError

    try:
        google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except GoogleAuthError as exc:
        raise ConfigurationError(
            "No Google Cloud credentials found (Application Default Credentials); nothing was built or submitted.",
            hint="Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                 "service account key file. To try tfcloud without Google Cloud, start "
                 "`tfcloud emulator start` and export what it prints.",
        ) from exc
