"""`transcriber transcribe`: the archive and the whole pipeline in-process (real ffmpeg,
the fake recognizer here; the real Whisper runs in tests/integration/steps)."""

from __future__ import annotations

import io
from pathlib import Path

from tests.conftest import SettingsFactory
from transcriber.cli.transcribe import transcribe
from transcriber.service.app import build_app
from transcriber.settings import Settings
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.steps import Behaviour, fake_steps
from transcriber.transcripts import load_structure

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


def _settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(
        pipeline={"workers": 0, "idle_sleep_seconds": 0.02, "poll_first_delay_seconds": 0.0,
                  "poll_delay_seconds": 0.02},
    )


async def test_transcribe_prints_each_transcript_and_exits_0(
    make_settings: SettingsFactory,
) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings),
                            [FIXTURES / "librivox_0880.mp3", FIXTURES / "espeak_en.ogg"],
                            fmt="vtt", out=out, err=err,
                            recognizer=FakeRecognizer())
    assert code == 0, err.getvalue()
    printed = out.getvalue()
    assert printed.count("WEBVTT") == 2
    assert "==> librivox_0880.mp3 <==" in printed
    assert "hello from the fake recognizer" in printed


async def test_transcribe_json_is_the_structure(make_settings: SettingsFactory) -> None:
    out = io.StringIO()
    code = await transcribe(_settings(make_settings), [FIXTURES / "festival_ru.m4a"],
                            fmt="json", out=out, err=io.StringIO(), owner="bob",
                            recognizer=FakeRecognizer())
    assert code == 0
    assert load_structure(out.getvalue().strip())[0].text == "hello from the fake recognizer"


async def test_transcribe_exits_1_with_the_reason_for_a_file_that_is_not_audio(
    make_settings: SettingsFactory, tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.mp3"
    notes.write_text("plain text, not a recording\n")
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings), [notes, FIXTURES / "librivox_0880.mp3"],
                            out=out, err=err,
                            recognizer=FakeRecognizer())
    assert code == 1
    assert "notes.mp3: refused: not audio" in err.getvalue()
    assert "hello from the fake recognizer" in out.getvalue()  # the other file still done


async def test_transcribe_exits_1_with_the_halt_reason(make_settings: SettingsFactory) -> None:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.02})
    steps = fake_steps({"submit": Behaviour(fail="permanent")})
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(settings, [FIXTURES / "librivox_0880.mp3"], out=out, err=err,
                            app=build_app(settings, steps=steps))
    assert code == 1
    assert "librivox_0880.mp3: halted (step_failed" in err.getvalue()
    assert out.getvalue() == ""
