from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcriber.ids import new_id, parse_id


def test_new_id_is_lowercase_26_chars() -> None:
    value = new_id()
    assert len(value) == 26
    assert value == value.lower()
    assert parse_id(value) == value


def test_ids_made_in_one_burst_sort_in_creation_order() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_parse_accepts_upper_case_and_lowers_it() -> None:
    value = new_id()
    assert parse_id(value.upper()) == value


@pytest.mark.parametrize(
    "raw",
    [
        None, "", "short", "x" * 26, "8" + "0" * 25, "0" * 25 + "u", "0" * 25 + "i",
        " " + "0" * 25, "0" * 27, "../../etc/passwd", "0" * 25 + "\x00",
        "01arz3ndektsv4rrffq69g5fa\u0430",
    ],
)
def test_malformed_ids_are_not_found(raw: str | None) -> None:
    assert parse_id(raw) is None


@given(st.text(max_size=40))
def test_parse_never_returns_something_that_is_not_an_id(raw: str) -> None:
    parsed = parse_id(raw)
    if parsed is not None:
        assert len(parsed) == 26
        assert parsed.isascii()
        assert parsed == raw.lower()
