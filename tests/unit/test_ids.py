from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ulid import ULID

from transcriber.core.ids import encode, new_id, new_unguessable_id, parse_id


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


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_encoding_is_the_ulid_librarys(value: int) -> None:
    assert encode(value) == str(ULID.from_int(value)).lower()


def test_new_ids_are_valid_ulids_of_the_current_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    value = new_id()
    after = time.time_ns() // 1_000_000
    parsed = ULID.from_str(value.upper())
    assert before <= parsed.milliseconds <= after
    assert str(parsed).lower() == value
    assert before <= ULID.from_str(new_unguessable_id().upper()).milliseconds


def test_unguessable_ids_do_not_step_by_one() -> None:
    ids = [int(ULID.from_str(new_unguessable_id().upper())) for _ in range(200)]
    assert len(set(ids)) == len(ids)
    steps = {b - a for a, b in itertools.pairwise(ids)}
    assert 1 not in steps
