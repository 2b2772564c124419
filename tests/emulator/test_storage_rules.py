"""Cloud Storage on the emulator as Google's client sees it: preconditions, name rules, JSON error bodies, and no
dropped connection on a valid name."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.emulator


@pytest.fixture
def gcs(emulator: Any) -> Iterator[storage.Client]:
    client = storage.Client(project="gcs-rules", credentials=AnonymousCredentials(),
                            client_options={"api_endpoint": emulator.settings.storage_endpoint})
    yield client
    client.close()


@pytest.fixture
def bucket(gcs: storage.Client) -> storage.Bucket:
    found = gcs.bucket("rules-bucket")
    return found if found.exists() else gcs.create_bucket("rules-bucket")


def test_if_generation_match_zero_refuses_to_overwrite_an_existing_object(bucket: storage.Bucket) -> None:
    blob = bucket.blob("once.txt")
    blob.upload_from_string(b"first", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed) as caught:
        bucket.blob("once.txt").upload_from_string(b"second", if_generation_match=0, retry=None)
    assert caught.value.code == 412
    assert "pre-conditions you specified did not hold" in caught.value.message
    assert caught.value.response.json()["error"]["errors"][0]["reason"] == "conditionNotMet"
    assert bucket.blob("once.txt").download_as_bytes() == b"first"


def test_generation_preconditions_on_write_read_and_delete(bucket: storage.Bucket) -> None:
    blob = bucket.blob("versioned.txt")
    blob.upload_from_string(b"v1")
    generation = bucket.get_blob("versioned.txt").generation
    bucket.blob("versioned.txt").upload_from_string(b"v2", if_generation_match=generation)
    with pytest.raises(exceptions.PreconditionFailed):  # the generation moved on
        bucket.blob("versioned.txt").upload_from_string(b"v3", if_generation_match=generation, retry=None)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("versioned.txt").download_as_bytes(if_generation_match=generation)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.delete_blob("versioned.txt", if_generation_match=generation)
    assert bucket.blob("versioned.txt").download_as_bytes() == b"v2"
    current = bucket.get_blob("versioned.txt").generation
    bucket.delete_blob("versioned.txt", if_generation_match=current)
    assert bucket.get_blob("versioned.txt") is None


@pytest.mark.parametrize("name", ["x/../y.txt", "a/./b", "dir/", "a b/ü/%41.txt", "#[*?].txt"])
def test_valid_object_names_round_trip(bucket: storage.Bucket, name: str) -> None:
    bucket.blob(name).upload_from_string(name.encode(), timeout=10, retry=None)
    assert bucket.blob(name).download_as_bytes(timeout=10, retry=None) == name.encode()
    assert name in [blob.name for blob in bucket.list_blobs(timeout=10)]


def test_an_object_beside_its_own_prefix(bucket: storage.Bucket) -> None:
    bucket.blob("p/q").upload_from_string(b"file", retry=None)
    bucket.blob("p/q/r").upload_from_string(b"under it", retry=None)
    assert bucket.blob("p/q").download_as_bytes() == b"file"
    assert bucket.blob("p/q/r").download_as_bytes() == b"under it"


@pytest.mark.parametrize(("name", "expected"), [
    ("line\nfeed.txt", "carriage return or line feed"),
    ("carriage\rreturn.txt", "carriage return or line feed"),
    ("..", 'cannot be named "." or ".."'),
    ("x" * 1025, "1 to 1024 bytes"),
    (".well-known/acme-challenge/token", ".well-known/acme-challenge/"),
])
def test_object_names_google_refuses(bucket: storage.Bucket, name: str, expected: str) -> None:
    with pytest.raises(exceptions.BadRequest) as caught:
        bucket.blob(name).upload_from_string(b"data", retry=None)
    error = caught.value.response.json()["error"]
    assert error["code"] == 400
    assert expected in error["message"]
    assert error["errors"][0]["reason"] == "invalid"


@pytest.mark.parametrize(("name", "expected"), [
    ("Upper-Case", "lowercase letters"),
    ("ab", "3 to 63 characters"),
    ("bad..dots", "each dot-separated part"),
    ("bad!chars", "only lowercase letters"),
    ("192.168.5.4", "IP addresses"),
    ("my-google-bucket", 'contain "google"'),
    ("goog-bucket", 'start with "goog"'),
])
def test_bucket_names_google_refuses(gcs: storage.Client, name: str, expected: str) -> None:
    with pytest.raises(exceptions.BadRequest) as caught:
        gcs.create_bucket(name, retry=None)
    assert expected in caught.value.message
    assert f"Invalid bucket name: {name!r}" in caught.value.message


def test_not_found_answers_carry_googles_json_error_body(gcs: storage.Client, bucket: storage.Bucket) -> None:
    with pytest.raises(exceptions.NotFound) as caught:
        bucket.blob("missing.txt").reload()
    assert caught.value.message.endswith(": No such object: rules-bucket/missing.txt")
    assert caught.value.errors == [{"domain": "global", "reason": "notFound",
                                    "message": "No such object: rules-bucket/missing.txt"}]
    with pytest.raises(exceptions.NotFound) as caught:
        gcs.get_bucket("no-such-bucket-here")
    assert caught.value.message.endswith(": The specified bucket does not exist.")


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_malformed_json_body_is_a_400_with_a_json_error(emulator: Any) -> None:
    status, body = _post(f"{emulator.settings.storage_endpoint}/storage/v1/b?project=p", b'{"name": ')
    assert status == 400
    assert body["error"]["code"] == 400
    assert body["error"]["errors"][0]["reason"] == "parseError"
    assert body["error"]["message"].startswith("Parse Error")


_PATHS = ["/storage/v1/b", "/storage/v1/b/fuzz-bkt", "/storage/v1/b/fuzz-bkt/o", "/upload/storage/v1/b/fuzz-bkt/o",
          "/storage/v1/b/fuzz-bkt/o/x", "/storage/v1/b/fuzz-bkt/o/x/copyTo/b/fuzz-bkt/o/y",
          "/storage/v1/b/fuzz-bkt/o/x/rewriteTo/b/fuzz-bkt/o/y", "/storage/v1/b/fuzz-bkt/o/x/compose",
          "/download/storage/v1/b/fuzz-bkt/o/x", "/batch/storage/v1", "/fuzz-bkt/x", "/storage/v1/b/fuzz-bkt/iam",
          "/storage/v1/b/fuzz-bkt/o/x/acl", "/storage/v1/b/fuzz-bkt/o/x%0Ay"]
_QUERIES = ["", "?uploadType=media&name=x", "?uploadType=multipart", "?uploadType=resumable&name=x",
            "?upload_id=zzz", "?ifGenerationMatch=abc", "?ifGenerationMatch=0", "?ifMetagenerationNotMatch=1",
            "?alt=media", "?softDeleted=true", "?matchGlob=[", "?project=p", "?uploadType=media&name=a%0Db"]
_BODIES = [None, b"", b"{", b"[]", b"null", b'{"name": 5}', b'{"name": "fuzz-bkt"}', b'{"sourceObjects": 3}',
           b"\x00\xff", b'{"name": "x"}', b"--b\r\nContent-Type: application/json\r\n\r\n{bad\r\n--b--"]
_TYPES = ["application/json", "multipart/related; boundary=b", "text/plain", "multipart/mixed; boundary=b", None]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), path=st.sampled_from(_PATHS),
       query=st.sampled_from(_QUERIES), body=st.sampled_from(_BODIES), content_type=st.sampled_from(_TYPES),
       gzipped=st.booleans())
def test_random_requests_get_an_answer_and_json_errors(emulator: Any, method: str, path: str, query: str,
                                                       body: bytes | None, content_type: str | None,
                                                       gzipped: bool) -> None:
    host = emulator.settings.storage_endpoint.removeprefix("http://")
    headers = {"Content-Type": content_type} if content_type else {}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    connection = http.client.HTTPConnection(host, timeout=10)
    try:
        connection.request(method, path + query, body=body, headers=headers)
        answer = connection.getresponse()  # a dropped connection raises here
        data = answer.read()
    finally:
        connection.close()
    assert answer.status != 500, data
    if answer.status >= 400:
        error = json.loads(data)["error"]
        assert error["code"] == answer.status
        assert error["errors"][0]["reason"] and error["message"]


def test_contents_an_older_emulator_kept_in_a_data_dir_are_still_read(tmp_path: Path) -> None:
    from gcp_storage_emulator.server import create_server

    from tfcloud.emulator.replicas import free_port
    from tfcloud.emulator.storage import StorageEmulator

    def client(endpoint: str) -> storage.Client:
        return storage.Client(project="p", credentials=AnonymousCredentials(),
                              client_options={"api_endpoint": endpoint})

    port = free_port()
    bundled = create_server("127.0.0.1", port, in_memory=False, data_dir=str(tmp_path))
    bundled.start()
    try:
        old = client(f"http://127.0.0.1:{port}")
        old.create_bucket("legacy-bkt").blob("a/b.txt").upload_from_string(b"old data")
        old.close()
    finally:
        bundled.stop()
    wrapped = StorageEmulator(data_dir=tmp_path)
    wrapped.start()
    try:
        new = client(wrapped.endpoint)
        assert new.bucket("legacy-bkt").blob("a/b.txt").download_as_bytes() == b"old data"
        new.bucket("legacy-bkt").blob("a/b.txt").upload_from_string(b"new data")
        assert new.bucket("legacy-bkt").blob("a/b.txt").download_as_bytes() == b"new data"
        new.close()
    finally:
        wrapped.stop()
