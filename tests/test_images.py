"""Content-addressed tags and image names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfcloud.errors import ValidationError
from tfcloud.image.context import collect_context
from tfcloud.image.tags import artifact_registry, content_digest, image_name, image_uri, split_image


def test_digest_covers_dockerfile_context_base_and_args(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    ctx = collect_context(tmp_path)
    base = content_digest(ctx, dockerfile="FROM a\n", base_image="a")
    assert base == content_digest(collect_context(tmp_path), dockerfile="FROM a\n", base_image="a")
    others = {
        content_digest(ctx, dockerfile="FROM a\nRUN x\n", base_image="a"),
        content_digest(ctx, dockerfile="FROM a\n", base_image="b"),
        content_digest(ctx, dockerfile="FROM a\n", base_image="a", build_args={"X": "1"}),
        content_digest(ctx, dockerfile="FROM a\n", base_image="a", build_args={"X": "2"}),
        content_digest(collect_context(tmp_path, generated={"g": b""}), dockerfile="FROM a\n", base_image="a"),
    }
    assert base not in others and len(others) == 5


def test_names() -> None:
    assert image_name("My Train.v2") == "my-train.v2"
    assert image_name("___") == "job"
    assert image_uri("localhost:5000/tfcloud/", "train", "ab" * 32) == "localhost:5000/tfcloud/train:" + "ab" * 8
    assert artifact_registry(project="p", region="us-central1") == "us-central1-docker.pkg.dev/p/tfcloud"
    assert split_image("localhost:5000/a/b:t") == ("localhost:5000/a/b", "t")
    assert split_image("localhost:5000/a/b") == ("localhost:5000/a/b", None)
    assert split_image("a/b@sha256:00") == ("a/b@sha256:00", None)
    with pytest.raises(ValidationError, match="Invalid `repository`"):
        image_uri("", "train", "ab")
