"""The speakers port: what the submit and poll steps need to tell speakers apart.

The adapter is the speaker engine's `LocalSpeakerSeparator`
(`transcriber.providers.speakers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from transcriber.core.errors import TranscriberError
from transcriber.domain.transcripts import Segment, Span, Utterance
from transcriber.ports.recognition import SpeechSink

if TYPE_CHECKING:
    # Only named here: domain.voices is numpy, which no command that does not separate
    # speakers should load (tests/unit/test_light_imports.py).
    from transcriber.domain.voices import VoiceWindows


class SpeakersUnavailable(TranscriberError):
    """Speakers cannot be told apart here (the speaker model is missing or broken):
    the record is finished without them, never failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Separation:
    """The utterances labelled S1, S2, … and the windows embedded to tell them apart
    (`None` where none were kept): what the record's voice prints are made of."""

    utterances: list[Utterance]
    voices: VoiceWindows | None = None


class SpeakerSeparator(Protocol):
    def prepare(self, audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> SpeechSink | None:
        """Start finding the audio's speaker turns now, beside its recognition; a hint
        that returns at once (`separate` works without it). With `speech_follows`, the
        recognizer's VAD will find the audio's speech regions (the audio is its one
        part): the sink returned, if any, takes them (or `None`, and then the turns are
        found from a VAD of the separator's own), and must be given them or `None`."""

    async def separate(self, audio: Path, segments: Sequence[Segment], *,
                       num_speakers: int | None,
                       speech: Sequence[Span] | None = None) -> Separation:
        """The segments as utterances labelled S1, S2, … from the audio's speaker
        turns, with the windows embedded; `speech` is where the recognizer's VAD found
        speech (found here when `None`). Raise `SpeakersUnavailable` when it cannot be
        done here."""

    async def channel_voices(self, audio: Path,
                             utterances: Sequence[Utterance]) -> VoiceWindows:
        """A stereo call's voices: windows of each utterance's speech embedded on the
        utterance's own channel of `audio` (a bounded number, chosen evenly). Raise
        `SpeakersUnavailable` when it cannot be done here."""

    async def close(self) -> None:
        """Stop what `prepare` started; called once, as the service stops."""
