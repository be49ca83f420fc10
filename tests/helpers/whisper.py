"""Real local recognizers on the bundled model prepared once per run.

The fixture `whisper_model` (tests/conftest.py) joins the model's two halves and
checks its SHA-256 once per run; every recognizer `MakeWhisper` hands out loads
from that folder (`model_dir`), so neither the join nor the hash is repeated.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar, overload

from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

W = TypeVar("W", bound=WhisperRecognizer)


class MakeWhisper:
    """`make_whisper(settings)`: a recognizer on the prepared model; `kind` a subclass."""

    def __init__(self, model: Path) -> None:
        self.model = model

    @overload
    def __call__(self, settings: RecognizerSettings | None = None, *,
                 time_limit_seconds: float = 3600) -> WhisperRecognizer: ...

    @overload
    def __call__(self, settings: RecognizerSettings | None = None, *, kind: type[W],
                 time_limit_seconds: float = 3600) -> W: ...

    def __call__(self, settings: RecognizerSettings | None = None, *,
                 kind: type[WhisperRecognizer] = WhisperRecognizer,
                 time_limit_seconds: float = 3600) -> WhisperRecognizer:
        chosen = dataclasses.replace(settings or RecognizerSettings(), model_dir=self.model)
        return kind(chosen, cache_dir=self.model, default_time_limit_seconds=time_limit_seconds)


def batched_and_sequential(make_whisper: MakeWhisper) -> Iterator[dict[bool, WhisperRecognizer]]:
    """The default (batched) recognizer and the sequential one, by `batched`, for a
    module's tests that compare the two on the same files; closed after them."""
    made = {batched: make_whisper(RecognizerSettings(batched=batched))
            for batched in (True, False)}
    yield made
    for recognizer in made.values():
        asyncio.run(recognizer.close())
