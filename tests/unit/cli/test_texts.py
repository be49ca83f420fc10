"""The command-line client's and `transcriber token`'s sentences, in English and Russian."""

from __future__ import annotations

import re

from transcriber.cli.texts import CATALOGUES, EN, RU, language


def test_both_catalogues_have_the_same_keys_and_placeholders() -> None:
    assert set(EN) == set(RU)
    for key in EN:
        assert set(re.findall(r"{(\w+)}", EN[key])) == set(re.findall(r"{(\w+)}", RU[key])), key


def test_the_locale_chooses() -> None:
    assert language({}) == "en"
    assert language({"LANG": "ru_RU.UTF-8"}) == "ru"
    assert language({"LC_ALL": "en_US.UTF-8", "LANG": "ru_RU.UTF-8"}) == "en"
    assert language({"LC_ALL": "", "LC_MESSAGES": "ru", "LANG": "en_US"}) == "ru"
    assert set(CATALOGUES) == {"en", "ru"}
