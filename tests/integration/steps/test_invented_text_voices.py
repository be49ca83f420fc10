"""No loops, no invented text: the `voices` recordings (`tests.helpers.hard_checks.INVENTED_GROUPS`:
monotone English, applause and laughter over speech, a sentence said again and again),
a module of their own so that another process runs them (`test_invented_text.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.hard_checks import INVENTED_GROUPS, Recognizers, check_invented

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", INVENTED_GROUPS["voices"])
def test_no_loops_and_no_invented_text_on_a_hard_recording(
        name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    check_invented(name, recognizers, tmp_path)
