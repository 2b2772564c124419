from __future__ import annotations

import datetime as dt

from tfcloud.google.catalog.prebuilt import (
    PREBUILT_TRAINING,
    prebuilt_available,
    prebuilt_training_image,
    tensorflow_tpu_release,
)


def test_the_tpu_build_is_the_newest_published_not_newer_than_tensorflow() -> None:
    choice = tensorflow_tpu_release("2.21.0")
    assert (choice.value, choice.version) == ("2.20.0", "2.20")
    assert choice.reason.startswith("tensorflow-tpu 2.20.0: the newest published not newer than TensorFlow 2.21.0")
    assert tensorflow_tpu_release("2.18.1").reason.startswith("tensorflow-tpu 2.18.0: the TPU build of the installed")


def test_the_prebuilt_image_matches_the_devices_and_the_region_and_says_its_end() -> None:
    cpu = prebuilt_training_image("2.21.0", device="cpu", region="us-central1")
    assert cpu.value == "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest"
    assert "the newest prebuilt for CPU not newer than TensorFlow 2.21.0" in cpu.reason
    assert "end of availability 2026-07-11" in cpu.reason
    assert prebuilt_training_image("2.16.1", device="gpu", region="europe-west4").value == \
        "europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-16.py310:latest"
    tpu = prebuilt_training_image("2.21.0", device="tpu", region="asia-east1")
    assert (tpu.value, tpu.version) == ("asia-docker.pkg.dev/vertex-ai/training/tf-tpu.2-15.cp310:latest", "2.15")


def test_no_prebuilt_tensorflow_image_is_available_today() -> None:
    """Why --no-build runs its own base image: every listed image is past its end of availability (2.17 on
    2026-07-11, TPU 2.15 on 2025-10-23; the older ones' dates were not read and count as past)."""
    names = [name for images in PREBUILT_TRAINING.values() for name in images.values()]
    today = dt.date(2026, 11, 26)
    assert [name for name in names if prebuilt_available(name, on=today)] == []
    assert prebuilt_available("tf-gpu.2-17.py310", on=dt.date(2026, 7, 11))
    assert not prebuilt_available("tf-gpu.2-17.py310", on=dt.date(2026, 7, 12))
    assert prebuilt_available("tf-tpu.2-15.cp310", on=dt.date(2025, 10, 23))
    assert not prebuilt_available("tf-cpu.2-16.py310", on=dt.date(2020, 1, 1))
