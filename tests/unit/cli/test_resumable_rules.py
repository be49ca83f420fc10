"""The command-line client's rules for a tus server's answers (cli/resumable.py)."""

from __future__ import annotations

import pytest

from transcriber.cli.answers import BadServerAnswer
from transcriber.cli.resumable import _metadata, _offset, _record_id


@pytest.mark.parametrize(("text", "low", "size", "value"), [
    ("0", 0, 10, 0), ("10", 0, 10, 10), ("7", 7, 10, 7)])
def test_an_offset_between_the_last_one_and_the_size_is_taken(
        text: str, low: int, size: int, value: int) -> None:
    assert _offset(text, low=low, size=size) == value


@pytest.mark.parametrize("text", [None, "", "-1", "11", "4", "1e1", "٣", "9" * 20, " 5"])
def test_any_other_offset_is_a_bad_answer(text: str | None) -> None:
    # Behind the last one (4 < 5), past the file (11 > 10), or not digits.
    with pytest.raises(BadServerAnswer):
        _offset(text, low=5, size=10)


def test_the_record_id_must_be_an_id() -> None:
    assert _record_id("01JZ0000000000000000000000") == "01jz0000000000000000000000"
    for text in ("../etc", "", "01jz000000000000000000000u"):
        with pytest.raises(BadServerAnswer):
            _record_id(text)


def test_metadata_is_base64_with_the_language_and_space_only_when_given() -> None:
    assert _metadata("звонок.mp3", None, None) == "filename 0LfQstC+0L3QvtC6Lm1wMw=="
    assert _metadata("a", "ru", None) == "filename YQ==,language cnU="
    # An empty space is said (the person's own records only), an absent one is not.
    assert _metadata("a", None, "") == "filename YQ==,space"
    assert _metadata("a", None, "01jz") == "filename YQ==,space MDFqeg=="
