"""Every text the bot says exists in both catalogues, with the same fields."""

from __future__ import annotations

import string

import pytest

from transcriber.bot import texts
from transcriber.bot.texts import CATALOGUES, LANGUAGES, T, language_for


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_text_is_in_the_catalogue(lang: texts.Language) -> None:
    missing = [key.name for key in T if not CATALOGUES[lang].get(key, "").strip()]
    assert missing == [], f"{lang} catalogue lacks {missing}"


def test_both_catalogues_fill_the_same_fields() -> None:
    differ = [key.name for key in T if _fields(texts.EN[key]) != _fields(texts.RU[key])]
    assert differ == []


def test_the_catalogues_say_different_things() -> None:
    same = [key.name for key in T if texts.EN[key] == texts.RU[key]
            and _fields(texts.EN[key]) != {"stage", "percent"} and "{name}" not in texts.EN[key]]
    assert same == []


def test_a_missing_text_fails_the_check() -> None:
    broken: dict[T, str] = {key: value for key, value in texts.RU.items()
                            if key is not T.LAST_NONE}
    assert [key for key in T if not broken.get(key)] == [T.LAST_NONE]


@pytest.mark.parametrize(("code", "expected"), [
    ("ru", "ru"), ("uk", "ru"), ("be", "ru"), ("kk", "ru"), ("ru-RU", "ru"), ("UK", "ru"),
    ("en", "en"), ("de", "en"), ("", "en"), (None, "en"),
])
def test_the_language_follows_the_senders_language_code(code: str | None,
                                                        expected: str) -> None:
    assert language_for(code) == expected


def test_telegram_language_forces_one() -> None:
    assert language_for("ru", forced="en") == "en"
    assert language_for("de", forced="ru") == "ru"
    assert texts.as_language("en", forced="ru") == "ru"
    assert texts.as_language("", forced="") == "en"


def test_sizes_and_durations_are_said_in_the_language() -> None:
    assert texts.megabytes("en", 20 * 1024 * 1024) == "20 MB"
    assert texts.megabytes("ru", 20 * 1024 * 1024) == "20 МБ"
    assert texts.megabytes("en", 2 * 1024 ** 3) == "2 GB"
    assert texts.duration("ru", 600) == "10 мин"
    assert texts.hours("en", 21600) == "6 h"
