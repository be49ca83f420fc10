"""`kill -9` of a real `transcriber serve` in the middle of a multi-part record.

The real model on a short recording cut into parts of 10 s (the production
default is 600 s). The first process is killed once half of the parts are
saved; after the restart the record is finished, the parts saved before the
kill are never recognized again (only the one in flight may start twice),
and their saved answers are the ones the transcript is made of.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import long_record as lr
from tests.helpers import speech_audio
from tests.helpers.processes import free_port
from tests.helpers.textmetrics import wer
from transcriber.db.connection import database_path

pytestmark = pytest.mark.slow

ENV = {
    "TRANSCRIBER_PIPELINE_WORKERS": "1",
    "TRANSCRIBER_PIPELINE_LEASE_SECONDS": "4",
    "TRANSCRIBER_PIPELINE_IDLE_SLEEP_SECONDS": "0.1",
    "TRANSCRIBER_RECOGNIZER_PART_SECONDS": "10",
    "TRANSCRIBER_RECOGNIZER_LANGUAGE": "en",
}


def test_kill_9_mid_record_resumes_at_the_first_unfinished_part(
    data_dir: Path, tmp_path: Path,
) -> None:
    source = tmp_path / "talk.mp3"
    known = speech_audio.build(speech_audio.speech_minutes(0.75), source)
    record_id = lr.accept_file(data_dir, source)
    db = database_path(data_dir)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]

    with logs[0].open("wb") as log:
        first = lr.serve(data_dir, free_port(), log, **ENV)
        try:
            total = lr.wait_for(lambda: len(lr.query(
                db, "SELECT 1 FROM recognitions WHERE record_id = ?", record_id)) or None,
                "the parts", timeout=60, proc=first)
            assert total >= 4
            before = lr.wait_for(
                lambda: saved if len(saved := lr.saved_parts(db, record_id)) >= total // 2
                else None, "half of the parts", timeout=120, proc=first)
            first.kill()  # SIGKILL: no shutdown path runs
            first.wait(timeout=10)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
    killed_at = lr.saved_parts(db, record_id)
    assert lr.state(db, record_id)["state"] == "normalized"
    assert set(before) <= set(killed_at) != set(range(total))

    with logs[1].open("wb") as log:
        second = lr.serve(data_dir, free_port(), log, **ENV)
        try:
            lr.wait_for(lambda: lr.state(db, record_id)["state"] == "done" or None, "done",
                        timeout=180, proc=second)
        finally:
            second.terminate()
            second.wait(timeout=30)

    row = lr.state(db, record_id)
    assert row["halted_at"] is None, row["error_text"]
    after = lr.saved_parts(db, record_id)
    assert {part: after[part] for part in killed_at} == killed_at  # the same saved answers
    starts = lr.recognition_starts(*logs)
    assert set(starts) == set(range(total))
    assert all(starts[part] == 1 for part in killed_at), starts
    assert sum(starts.values()) <= total + 1, starts  # only the part in flight twice
    text = lr.transcript(db, record_id)
    assert wer(known, text) <= 0.25, text
