"""Known voices in the pipeline: a record's speakers' prints saved with its transcript.

When the poll step saves a transcript whose speakers the local engine told apart
(or a stereo call's channels), the windows embedded are summed up per speaker
(`voices.speaker_prints`, pure) and saved with the transcript, in the same
transaction (`SaveVoices`): the writer then matches them against the owner's
profiles and stores the suggestions. Any other transcript forgets the record's
old prints (`ForgetVoices`), so they always belong to the transcript shown.
`recognizer.voice_profiles = false` writes none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from transcriber.db.commands.voices import VoiceRules, forget_record_voices, save_record_voices
from transcriber.db.writer import WriteContext
from transcriber.domain.voices import SpokenLine, VoicePrint, VoiceWindows, speaker_prints
from transcriber.ports import Utterance
from transcriber.settings import Settings


def voice_rules(settings: Settings) -> VoiceRules | None:
    """The known-voice rules of the settings; `None` when the feature is off."""
    if not settings.recognizer.voice_profiles:
        return None
    return VoiceRules(threshold=settings.speakers.suggestion_threshold)


def spoken_lines(utterances: Sequence[Utterance]) -> list[SpokenLine]:
    """Pure: the utterances that have a speaker, as the prints need them."""
    return [SpokenLine(speaker=u.speaker, channel=u.channel, start_ms=u.start_ms,
                       end_ms=u.end_ms) for u in utterances if u.speaker is not None]


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveVoices:
    """The record's speakers' prints, the windows they came from, its suggestions."""

    # Biometric data: never in a repr (a failed advance's log, a traceback).
    windows: VoiceWindows = field(repr=False)
    prints: Mapping[str, VoicePrint] = field(repr=False)
    rules: VoiceRules

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        await save_record_voices(ctx, record_id=record_id, windows=self.windows,
                                 prints=self.prints, rules=self.rules)


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgetVoices:
    """The record's old prints go: its new transcript has none."""

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        await forget_record_voices(ctx, record_id=record_id)


def voices_effect(settings: Settings, windows: VoiceWindows | None,
                  utterances: Sequence[Utterance]) -> SaveVoices | ForgetVoices:
    """Pure: what the transcript's save does with the record's voices."""
    rules = voice_rules(settings)
    if rules is None or windows is None or len(windows) == 0:
        return ForgetVoices()
    prints = speaker_prints(windows, spoken_lines(utterances))
    return SaveVoices(windows=windows, prints=prints, rules=rules)
