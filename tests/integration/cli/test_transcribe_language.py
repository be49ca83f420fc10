"""`transcriber transcribe` with the real Whisper, as a person runs it: the
`recognizer.language` setting is the language of a file that names none, and
`--language` overrides it (issue 38: the setting had no visible effect)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.helpers.audio import FIXTURES

pytestmark = pytest.mark.slow

WAIT_SECONDS = 300.0
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
LATIN = re.compile(r"[A-Za-z]")


def _transcribe(tmp_path: Path, *args: str, language_setting: str) -> str:
    env = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(tmp_path / "data"),
           "TRANSCRIBER_STORAGE_MIN_FREE_BYTES": "0",
           "TRANSCRIBER_RECOGNIZER_LANGUAGE": language_setting,
           "TRANSCRIBER_RECOGNIZER_DIARIZATION": "off"}
    done = subprocess.run([sys.executable, "-m", "transcriber.cli", "transcribe",
                           str(FIXTURES / "festival_ru.m4a"), "--format", "json", *args],
                          env=env, capture_output=True, text=True, timeout=WAIT_SECONDS,
                          check=False)
    assert done.returncode == 0, done.stderr
    return " ".join(u["text"] for u in orjson.loads(done.stdout)["utterances"])


def test_the_language_setting_and_the_option_reach_the_recognizer(tmp_path: Path) -> None:
    # Russian speech recognized as English comes out in English (Whisper translates; left
    # to detect, it hears Russian): the setting was used.
    as_english = _transcribe(tmp_path, language_setting="en")
    assert LATIN.search(as_english), as_english
    assert not CYRILLIC.search(as_english), as_english
    # `--language ru` over the same setting: Russian.
    as_russian = _transcribe(tmp_path, "--language", "ru", language_setting="en")
    assert CYRILLIC.search(as_russian), as_russian
    assert not LATIN.search(as_russian), as_russian
