"""The hard-conditions corpus, short versions: the `russian` conditions
(`tests.helpers.hard_checks.HARD_GROUPS`), a module of their own so that another process runs them
(`test_hard_audio.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.hard_checks import HARD_GROUPS, Recognizers, check_hard_condition

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", HARD_GROUPS["russian"])
def test_the_default_decoding_hears_every_word_of_a_hard_recording(
        name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    check_hard_condition(name, recognizers, tmp_path)
