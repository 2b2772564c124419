"""Fixtures for tests that run Vertex AI jobs on the emulator the way `--no-build` jobs run: a real Docker engine
and registry on loopback (the session's ``engine``), the job's base image built once from a parent image that
carries TensorFlow and the Google clients a replica uses (Cloud Storage, Secret Manager), replicas as containers
on the host network. Import the fixtures into a test module: ``from tests.dockervertex import google_base``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["google_base", "vertex_env"]


@pytest.fixture(scope="session")
def google_base(engine: Any) -> str:
    """TensorFlow, tf-keras, google-cloud-storage and google-cloud-secret-manager from this interpreter (once)."""
    pytest.importorskip("tensorflow", reason="the --no-build base image carries TensorFlow")
    pytest.importorskip("google.cloud.secretmanager_v1", reason="the replicas read Secret Manager")
    from tfcloud.testing.dockerd import tensorflow_base_image

    client = engine.client()
    try:
        return tensorflow_base_image(client, name="tfcloud-test/tensorflow-google",
                                     also=["google-cloud-storage", "google-cloud-secret-manager"])
    finally:
        client.close()


def vertex_env(monkeypatch: pytest.MonkeyPatch, emulator: Any, engine: Any, *, project: str, bucket: str) -> None:
    """Point tfcloud at ``emulator`` (Vertex AI, storage) and ``engine`` (the base image's registry and builder)."""
    for key, value in emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TFCLOUD_PROJECT", project)
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", bucket)
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)


def docker_emulator(engine: Any, project: str, buckets: list[str], **kwargs: Any) -> Iterator[Any]:
    """An emulator whose replicas are containers on ``engine``, with ``buckets`` made."""
    pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI path needs tfcloud[cloud]")
    pytest.importorskip("gcp_storage_emulator", reason="the storage emulator needs tfcloud[emulator]")
    from tfcloud.emulator import Emulator

    with Emulator(project=project, docker_host=engine.docker_host, **kwargs) as running:
        storage = running.storage_client()
        try:
            for bucket in buckets:
                storage.create_bucket(bucket)
        finally:
            storage.close()
        yield running
