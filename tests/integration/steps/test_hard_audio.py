"""The hard-conditions corpus, short versions, on the default settings: the batched
decoding against the sequential one on the same file
(`tests.helpers.hard_checks.check_hard_condition` says what each proves; the full
corpus is the benchmark `tests/bench/test_hard_audio.py`).

The corpus runs in three modules of about the same decoding time (`HARD_GROUPS`): this
one (speech under noise and music), `test_hard_audio_rooms.py` (telephone, level,
clipping, hum, long gaps) and `test_hard_audio_russian.py`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.helpers.hard_audio import CONDITIONS
from tests.helpers.hard_checks import HARD_GROUPS, Recognizers, check_hard_condition

pytestmark = pytest.mark.slow


def test_every_condition_runs_in_one_module() -> None:
    grouped = list(itertools.chain.from_iterable(HARD_GROUPS.values()))
    assert sorted(grouped) == sorted(CONDITIONS)


@pytest.mark.parametrize("name", HARD_GROUPS["noise"])
def test_the_default_decoding_hears_every_word_of_a_hard_recording(
        name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    check_hard_condition(name, recognizers, tmp_path)
