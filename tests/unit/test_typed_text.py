"""What people type: the login rule and the free-text rule (transcriber.domain.text)."""

from __future__ import annotations

import itertools
import sys
import unicodedata

import pytest

from transcriber.domain.text import (
    DEFAULT_IGNORABLE,
    LoginRefused,
    canonical_login,
    is_default_ignorable,
    text_problem,
    without_refused,
)

INVISIBLE = ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\u034f", "\ufe0f", "\u180e",
             "\u200b", "\u200c", "\u200d", "\u2060", "\u2066", "\u202e", "\ufeff", "\u00ad",
             "\U000e0041", "\U000e0100", "\u061c", "\U0001d173"]
SPACES = ["\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", " ", "\t", "\n", "\x85"]


@pytest.mark.parametrize("ch", INVISIBLE + SPACES + ["\x00", "\x7f", "\ue000", "\u0378"])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_login_with_an_invisible_or_space_character_is_refused(ch: str, where: str) -> None:
    login = {"start": ch + "alice", "middle": "ali" + ch + "ce", "end": "alice" + ch}[where]
    with pytest.raises(LoginRefused) as caught:
        canonical_login(login)
    assert login not in str(caught.value)


@pytest.mark.parametrize(("raw", "stored"), [
    ("alice", "alice"),
    ("\uff41\uff4c\uff49\uff43\uff45", "alice"),  # fullwidth
    ("jose\u0301", "jos\u00e9"),  # composed
    ("\ufb01le", "file"),  # the fi ligature
    ("\u2460", "1"),  # circled digit one
    ("Ёлка", "Ёлка"),
    ("user@example.org", "user@example.org"),
    ("o'brien-2", "o'brien-2"),
])
def test_logins_are_nfkc_normalized(raw: str, stored: str) -> None:
    assert canonical_login(raw) == stored


def test_empty_and_overlong_logins_are_refused() -> None:
    with pytest.raises(LoginRefused):
        canonical_login("")
    with pytest.raises(LoginRefused):
        canonical_login("x" * 256)
    assert canonical_login("x" * 255) == "x" * 255


def test_the_default_ignorable_table_is_sorted_and_disjoint() -> None:
    for (start, end), (after, _) in itertools.pairwise(DEFAULT_IGNORABLE):
        assert start <= end < after - 1  # merged when adjacent
    assert is_default_ignorable("\u3164")
    assert is_default_ignorable("\U000e0fff")
    assert not is_default_ignorable("a")
    assert not is_default_ignorable("\u2800")
    assert not is_default_ignorable("\U000e1000")


def test_the_default_ignorable_table_matches_another_implementation() -> None:
    regex = pytest.importorskip("regex")
    pattern = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    # Code points assigned in Python's Unicode version: a newer one only adds.
    differ = [hex(code) for code in range(sys.maxunicode + 1)
              if (pattern.match(chr(code)) is not None) != is_default_ignorable(chr(code))
              and unicodedata.category(chr(code)) != "Cn"]
    assert differ == []


@pytest.mark.parametrize("value", [
    "report\u202egnp.exe",  # RIGHT-TO-LEFT OVERRIDE: shows as report…exe.png
    "a\u2066b\u2069",  # isolates
    "a\u200fb",  # RIGHT-TO-LEFT MARK
    "zero\u200bwidth",
    "\ufeffbom",
    "nul\x00",
    "bell\x07",
    "esc\x1b[31m",
    "line\u2028separator",
    "soft\u00adhyphen",
    "tag\U000e0041",
])
def test_free_text_refuses_bidi_format_and_control_characters(value: str) -> None:
    problem = text_problem(value, multiline=True)
    assert problem is not None
    bad = next(ch for ch in value if ch not in "abcdefghijklmnopqrstuvwxyz.[31m")
    assert f"U+{ord(bad):04X}" in problem
    cleaned = without_refused(value, multiline=True)
    assert text_problem(cleaned, multiline=True) is None
    assert bad not in cleaned
    assert len(cleaned) < len(value)


@pytest.mark.parametrize("value", [
    "Budget call",
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian: ZERO WIDTH NON-JOINER
    "\U0001f469\u200d\U0001f4bb",  # an emoji sequence: ZERO WIDTH JOINER
    "\u2764\ufe0f",  # VARIATION SELECTOR-16 in an emoji
    "caf\u00e9 \u00a0 \u0416",
    "<b>tags</b> & stuff",
])
def test_free_text_keeps_what_people_write(value: str) -> None:
    assert text_problem(value) is None


def test_line_breaks_and_tabs_only_where_a_field_has_several_lines() -> None:
    assert text_problem("two\nlines\tand a tab", multiline=True) is None
    assert text_problem("two\nlines") is not None
    assert text_problem("a\tb") is not None
    assert text_problem("cr\r\nlf", multiline=True) is not None
