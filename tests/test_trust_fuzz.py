"""Random text into every number, duration and time parser of issue 29's surfaces, and into the credential
check of requirements files: only tfcloud's own errors come out (never a ValueError, an OverflowError or a
traceback), and a secret given is never in the message."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (the test extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tfcloud.errors import ValidationError  # noqa: E402

FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: Text as people (and pastes) make it: digits of every script, signs, units, spaces, exponents.
NUMBERISH = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from("0123456789²³¹١٢٣٤٥٦٧٨٩۰߀०১੧௧๑ ._-+eE:dhmsTZz"), max_size=30),
    st.from_regex(r"[0-9]{1,30}[dhms]?", fullmatch=True),
)


@FUZZ
@given(text=NUMBERISH)
def test_number_and_duration_parsers_raise_only_validation_errors(text: str) -> None:
    from tfcloud.config.digits import ascii_float, ascii_int, parse_duration
    from tfcloud.flow.validate import parse_since, validate_tail
    from tfcloud.google.cloud.gcloud import RetryPolicy
    from tfcloud.google.vertex.options import SchedulingStrategy, check_max_wait

    for value in (ascii_int(text), ascii_float(text), parse_duration(text)):
        assert value is None or value >= 0
    if ascii_int(text) is not None:
        assert text.strip(" ").isascii()
    for check in (validate_tail, parse_since, lambda t: check_max_wait(t, SchedulingStrategy.FLEX_START),
                  RetryPolicy.from_setting):
        with contextlib.suppress(ValidationError):
            check(text)


@FUZZ
@given(user=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
                                           blacklist_characters="/@?#:"), min_size=1, max_size=20),
       password=st.text(alphabet=st.characters(whitelist_categories=("L", "N")), min_size=6, max_size=20),
       option=st.sampled_from(["--index-url ", "-i ", "--extra-index-url=", "--find-links ", "pkg @ ", "-r "]))
def test_a_credential_in_any_requirements_line_is_refused_and_never_shown(
        user: str, password: str, option: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from tfcloud.entry.requirements import validate_requirements_file

    hypothesis.assume(password not in user and "${" not in user)
    path: Path = tmp_path_factory.mktemp("req") / "requirements.txt"
    path.write_text(f"numpy\n{option}https://{user}:{password}@pypi.example.com/simple/x.whl\n", encoding="utf-8")
    with pytest.raises(ValidationError) as raised:
        validate_requirements_file(path)
    assert raised.value.field == "requirements_txt" and f"{user}:{password}" not in str(raised.value)
    assert "https://***@pypi.example.com" in str(raised.value)
    assert "requirements.txt:2" in str(raised.value)
