"""What each recognizer tells the pipeline of itself, and that a door without it is told
the same by the settings."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transcriber
from tests.helpers.settings import SettingsFactory
from transcriber.domain.languages import checked_language, supported_languages
from transcriber.ports import Runs, SpeakerLabels
from transcriber.providers.quota import CallBudget
from transcriber.providers.recognizers import (
    capabilities_of,
    configured_capabilities,
    saved_answer_formats,
)
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock

STEPS = Path(transcriber.__file__).parent / "pipeline" / "steps"


async def test_the_local_recognizer_tells_what_the_settings_tell(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    settings = make_settings(recognizer={"part_seconds": 300, "part_overlap_seconds": 2})
    recognizer = WhisperRecognizer(settings.recognizer, cache_dir=tmp_path,
                                   default_time_limit_seconds=60)
    try:
        told = recognizer.capabilities
        assert told == configured_capabilities(settings)
        assert capabilities_of(None, settings) == told == capabilities_of(recognizer, settings)
        assert (told.provider, told.model) == (recognizer.provider, recognizer.model)
        assert (told.runs, told.speakers, told.needs_object_store) == (
            Runs.HERE, SpeakerLabels.WORDS, False)
        assert (told.max_part_ms, told.part_overlap_ms) == (300_000, 2_000)
        assert "ru" in told.languages
        assert "auto" not in told.languages
    finally:
        await recognizer.close()


async def test_speechkit_tells_what_the_settings_tell(make_settings: SettingsFactory) -> None:
    settings = make_settings(recognizer={"provider": "speechkit"},
                             speechkit={"api_key": Secret("k"), "part_overlap_seconds": 7})
    recognizer = SpeechkitRecognizer(settings.speechkit, budget=CallBudget(
        limit=10, window_seconds=3600, clock=FakeClock()))
    try:
        told = recognizer.capabilities
        assert told == configured_capabilities(settings) == capabilities_of(None, settings)
        assert (told.provider, told.model) == (recognizer.provider, recognizer.model)
        assert (told.runs, told.speakers, told.needs_object_store) == (
            Runs.REMOTE, SpeakerLabels.OWN, True)
        assert told.part_overlap_ms == 7_000
        # A language the local model knows and SpeechKit does not is refused for it.
        assert checked_language(told.languages, "ru") == "ru"
        assert checked_language(told.languages, "ja") is None
        assert supported_languages(told.languages)[0] == "auto"
    finally:
        await recognizer.close()


@pytest.mark.parametrize("provider", ["local", "speechkit"])
def test_every_saved_answer_is_read_with_the_capabilities_it_was_cut_with(
    make_settings: SettingsFactory, provider: str
) -> None:
    """Whatever is configured now, a saved answer of either provider finds its parser and
    its provider's part overlap (a record started before the provider changed)."""
    settings = make_settings(recognizer={"provider": provider, "part_overlap_seconds": 1},
                             speechkit={"api_key": Secret("k"), "part_overlap_seconds": 4})
    formats = saved_answer_formats(settings)
    assert {name: f.capabilities.part_overlap_ms for name, f in formats.items()} == {
        "local": 1_000, "speechkit": 4_000}
    assert formats["local"].parse(b'{"segments": [{"start_ms": 0, "end_ms": 5, "text": "x"}],'
                                  b' "language": "de"}').language == "de"
    assert formats["speechkit"].parse(b"").utterances == ()


def test_a_step_imports_no_other_step() -> None:
    """What two steps share (the part bookkeeping, reading the record) is a pipeline
    module of its own (`pipeline.part_rows`, `steps._common`), never one step's."""
    steps = {path.stem for path in STEPS.glob("*.py")} - {"__init__", "_common"}
    imported = {
        path.stem: {node.module.rsplit(".", 1)[-1]
                    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("transcriber.pipeline.steps.")}
        for path in STEPS.glob("*.py") if path.stem in steps
    }
    assert {step: sorted(found & steps) for step, found in imported.items() if found & steps} == {}
