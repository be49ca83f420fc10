"""No loops, no invented text: short versions of the recordings Whisper invents text on
(`tests/helpers/invented_audio.py`), the default (batched) decoding against the
sequential one on the same file (`tests.helpers.hard_checks.check_invented` says what each proves;
the full sizes are the benchmark `tests/bench/test_invented_text.py`).

The recordings run in two modules of about the same decoding time (`INVENTED_GROUPS`):
this one (the monotone Russian voice that loops, music and crowd between speech) and
`test_invented_text_voices.py`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.helpers.hard_checks import INVENTED_GROUPS, SHORT, Recognizers, check_invented

pytestmark = pytest.mark.slow


def test_every_recording_runs_in_one_module() -> None:
    grouped = list(itertools.chain.from_iterable(INVENTED_GROUPS.values()))
    assert sorted(grouped) == sorted(SHORT)


@pytest.mark.parametrize("name", INVENTED_GROUPS["loops"])
def test_no_loops_and_no_invented_text_on_a_hard_recording(
        name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    check_invented(name, recognizers, tmp_path)
