"""A fake recognizer that records its calls; answers and faults are set by the test."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from transcriber.ports import (
    Answer,
    AudioPart,
    Capabilities,
    Runs,
    SpeakerLabels,
    Submitted,
    Utterance,
)
from transcriber.providers.recognizers import WHISPER_LANGUAGES
from transcriber.providers.whisper_answer import read_local_payload


def _segment(u: Utterance) -> dict[str, Any]:
    segment: dict[str, Any] = {"start_ms": u.start_ms, "end_ms": u.end_ms, "text": u.text}
    if u.words:
        segment["words"] = [{"start_ms": w.start_ms, "end_ms": w.end_ms, "text": w.text,
                             "probability": w.probability} for w in u.words]
    return segment


def local_payload(utterances: Sequence[Utterance],
                  report: Mapping[str, Any] | None = None) -> bytes:
    """An answer in the local recognizer's format (what `read_local_payload` reads):
    the utterances' words where they have them, and `report`'s fields (`speech`,
    `unclear`, `repeats_removed`: docs/recognition.md, "Quality report")."""
    return orjson.dumps({
        "provider": "fake", "model": "fake",
        "segments": [_segment(u) for u in utterances], **(report or {}),
    })


class FakeRecognizer:
    """Implements the `Recognizer` port.

    `finishes_in_submit=True` runs here as the local recognizer does (the answer
    comes with `submit`); otherwise `fetch` answers None `pending_checks`
    times per operation, then the answer. `submit_faults` / `fetch_faults`
    are raised, in order, before anything else happens in the next calls.
    Its speakers are not told apart and its parts overlap by five seconds unless a
    subclass says otherwise (`speakers`, `part_overlap_ms`).
    """

    provider = "fake"
    model = "fake"
    payload_ext = ".json"
    speakers = SpeakerLabels.NONE
    part_overlap_ms = 5000

    def __init__(
        self,
        *,
        utterances: Sequence[Utterance] = (Utterance(start_ms=0, end_ms=1000, channel=0,
                                                     text="hello from the fake recognizer"),),
        finishes_in_submit: bool = True,
        pending_checks: int = 0,
        needs_object_store: bool = False,
        max_part_ms: int | None = None,
        limit_seconds: float | None = None,
        expected_real_time_factor: float = 0.5,
    ) -> None:
        self.utterances = list(utterances)
        self.finishes_in_submit = finishes_in_submit
        self.pending_checks = pending_checks
        self.needs_object_store = needs_object_store
        self.max_part_ms = max_part_ms
        self.limit_seconds = limit_seconds
        self.expected_real_time_factor = expected_real_time_factor
        self.submitted: list[AudioPart] = []
        self.fetched: list[str] = []
        self.submit_faults: deque[BaseException] = deque()
        self.fetch_faults: deque[BaseException] = deque()
        self.closed = False
        self._checks: dict[str, int] = {}
        self.report: dict[str, Any] = {}
        """Fields every answer carries beside its segments (`speech`, `unclear`, …)."""

    def payload_for(self, part_number: int) -> bytes:
        del part_number
        return local_payload(self.utterances, self.report)

    async def submit(self, part: AudioPart) -> Submitted:
        if self.submit_faults:
            raise self.submit_faults.popleft()
        self.submitted.append(part)
        external_id = f"fake-op-{len(self.submitted)}"
        if self.finishes_in_submit:
            return Submitted(external_id=external_id,
                             payload=self.payload_for(len(self.submitted) - 1))
        self._checks[external_id] = 0
        return Submitted(external_id=external_id)

    async def fetch(self, external_id: str) -> bytes | None:
        if self.fetch_faults:
            raise self.fetch_faults.popleft()
        self.fetched.append(external_id)
        checks = self._checks.get(external_id, 0)
        if checks < self.pending_checks:
            self._checks[external_id] = checks + 1
            return None
        return self.payload_for(int(external_id.rsplit("-", 1)[1]) - 1)

    @property
    def capabilities(self) -> Capabilities:
        # Built on every call: a test may change an attribute between claims.
        return Capabilities(
            provider=self.provider, model=self.model, languages=WHISPER_LANGUAGES,
            max_part_ms=self.max_part_ms, part_overlap_ms=self.part_overlap_ms,
            runs=Runs.HERE if self.finishes_in_submit else Runs.REMOTE,
            needs_object_store=self.needs_object_store, speakers=self.speakers,
            expected_real_time_factor=self.expected_real_time_factor)

    def parse(self, payload: bytes) -> Answer:
        return read_local_payload(payload)

    def time_limit_seconds(self, duration_ms: int | None) -> float | None:
        return self.limit_seconds

    async def close(self) -> None:
        self.closed = True


class FakeVoiceRecognizer(FakeRecognizer):
    """Also implements `RecognizesSamples` and `Translates`: every voice command is
    answered `text` (in `language`, or the one asked for) and recorded in `commands` as
    (PCM, language); every translation answers `translation`, recorded in `translated`
    as (the file's bytes, language); `faults` are raised, in order, before anything else
    happens in the next calls of either."""

    def __init__(self, *, text: str = "turn on the kitchen light",
                 language: str | None = None) -> None:
        super().__init__()
        self.text = text
        self.language = language
        self.commands: list[tuple[bytes, str | None]] = []
        self.translation = ("Hello, today we are checking the recognition of Russian "
                            "speech.")
        self.translated: list[tuple[bytes, str | None]] = []
        self.faults: deque[BaseException] = deque()

    async def translate(self, path: Path, *, language: str | None) -> Answer:
        if self.faults:
            raise self.faults.popleft()
        self.translated.append((await asyncio.to_thread(path.read_bytes), language))
        return Answer(utterances=(Utterance(start_ms=0, end_ms=4500, channel=0,
                                            text=self.translation),), language="ru")

    async def recognize_samples(self, samples: bytes, *, language: str | None) -> Answer:
        if self.faults:
            raise self.faults.popleft()
        self.commands.append((samples, language))
        utterance = Utterance(start_ms=0, end_ms=len(samples) * 1000 // 32_000, channel=0,
                              text=self.text)
        return Answer(utterances=(utterance,), language=self.language or language)


__all__ = ["FakeRecognizer", "FakeVoiceRecognizer", "local_payload"]
