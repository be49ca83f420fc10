"""Who spoke when, wired into the pipeline: the decision, the words, the engine's call.

The speaker engine (`transcriber.providers.speakers`) finds speaker turns in
the normalized audio and gives each recognized word the speaker it overlaps
most. Here: whether a record's speakers are told apart at all, and by whom
(pure decisions on the recognizer's `Capabilities.speakers`), the joined
utterances' words as the segments the engine labels, and the speech regions the
recognizer's VAD found (pure). The engine itself is a port
(`ports.SpeakerSeparator`) the submit and poll steps are given; a missing or
broken speaker model leaves the record without speakers, with one warning,
never failed.

The mode comes from the `recognizer.diarization` setting (and its env var
`TRANSCRIBER_RECOGNIZER_DIARIZATION`, the CLI's `--diarization`): those names are
a user-facing contract and keep the older word; in the code the concept is
"speakers".
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Final

from transcriber.pipeline.parts import PartPlan, placed
from transcriber.ports import Answer, Segment, Span, SpeakerLabels, Utterance

MODES: Final = ("auto", "on", "off")
# `auto` leaves short records alone: a voice note of a few seconds has too few
# windows to cluster and is almost always one person. `on` tells them apart at any length.
AUTO_MIN_MS: Final = 10_000


def speakers_apply(mode: str, *, speakers: int | None, duration_ms: int,
                   labels: SpeakerLabels) -> bool:
    """Pure: whether a record's speakers are told apart (`mode`: the
    `recognizer.diarization` setting; `labels`: how the recognizer's are).

    A recognizer whose words the speaker engine labels is asked for word times (its
    words are labelled after the last part); one that labels its own is asked for
    that (the parts' `words` flag carries the wish to both); one that does neither
    leaves the record without speakers. The uploader's `speakers=1` turns it off.
    """
    if mode == "off" or speakers == 1 or labels is SpeakerLabels.NONE:
        return False
    return mode == "on" or duration_ms >= AUTO_MIN_MS


def speakers_found_locally(mode: str, *, speakers: int | None, duration_ms: int,
                           channels: int, labels: Collection[SpeakerLabels],
                           overlap_ms: int) -> bool:
    """Pure: whether the speaker engine here labels a record's words: a mono record whose
    every part was answered by a recognizer whose words it labels (`labels`: of each
    part's), cut in pauses (no overlap: the words' parts join as they are), when its
    speakers are told apart at all. The submit step then starts the turns beside the
    recognition; the poll step takes them."""
    return (channels == 1 and overlap_ms == 0 and set(labels) == {SpeakerLabels.WORDS}
            and speakers_apply(mode, speakers=speakers, duration_ms=duration_ms,
                               labels=SpeakerLabels.WORDS))


def segments_of(utterances: Sequence[Utterance]) -> list[Segment]:
    """Pure: the joined utterances of a record's parts (`parts.join`: cut in pauses, no
    overlap) as the segments the speaker engine labels, each with its words."""
    return [Segment(start_ms=u.start_ms, end_ms=u.end_ms, text=u.text, words=u.words)
            for u in utterances]


def speech_of(parts: Sequence[tuple[PartPlan, Answer]]) -> list[Span] | None:
    """Pure: the speech regions the recognizer's VAD found in each part, on the record's
    timeline and held inside their part's span; `None` unless every answer says
    (sequential decoding, another recognizer, or saved before they were kept: a part
    without would look like silence), and the speaker engine then runs its own VAD."""
    regions: list[Span] = []
    for plan, answer in sorted(parts, key=lambda item: item[0].index):
        if answer.speech is None:
            return None
        regions.extend(placed(answer.speech, plan))
    return regions


def by_first_appearance(utterances: Sequence[Utterance]) -> list[Utterance]:
    """Pure: the speakers named again S1, S2, … in the order they first speak: the
    speaker of the earliest utterance (by start, then by place) is S1, the next new
    one S2. The utterances keep their order and everything but the label; one without
    a speaker stays without.

    The last step before a transcript is saved, whichever engine named the speakers:
    a name an engine gives is an arbitrary number (a cluster's, SpeechKit's channel
    tag, a stereo channel), so the same voices in the same audio get the same labels
    only once they are numbered by the audio itself (docs/speakers.md, "Same audio,
    same transcript")."""
    order = sorted(range(len(utterances)), key=lambda i: (utterances[i].start_ms, i))
    names: dict[str, str] = {}
    for i in order:
        speaker = utterances[i].speaker
        if speaker is not None and speaker not in names:
            names[speaker] = f"S{len(names) + 1}"
    return [u if u.speaker is None or names[u.speaker] == u.speaker
            else replace(u, speaker=names[u.speaker]) for u in utterances]
