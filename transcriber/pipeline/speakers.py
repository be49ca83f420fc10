"""Who spoke when, wired into the pipeline: the decision, the words, the engine's call.

The speaker engine (`transcriber.providers.speakers`) finds speaker turns in
the normalized audio and gives each recognized word the speaker it overlaps
most. Here: whether a record's speakers are told apart at all (a pure
decision), the words of the local recognizer's saved answers on one timeline,
and the speech regions its VAD found (pure). The engine itself is a port
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
from typing import Any, Final

import orjson

from transcriber.pipeline.parts import PartPlan
from transcriber.ports import Segment, Span, Utterance, Word

MODES: Final = ("auto", "on", "off")
# `auto` leaves short records alone: a voice note of a few seconds has too few
# windows to cluster and is almost always one person. `on` tells them apart at any length.
AUTO_MIN_MS: Final = 10_000
SPEAKER_PROVIDERS: Final = frozenset({"local", "speechkit"})


def speakers_apply(mode: str, *, speakers: int | None, duration_ms: int,
                   provider: str) -> bool:
    """Pure: whether a record's speakers are told apart (`mode`: the
    `recognizer.diarization` setting).

    The local recognizer is asked for word times (its words are labelled after the
    last part); SpeechKit is asked for its own speaker labeling (the parts'
    `words` flag carries the wish to both). The uploader's `speakers=1` turns
    it off.
    """
    if mode == "off" or speakers == 1 or provider not in SPEAKER_PROVIDERS:
        return False
    return mode == "on" or duration_ms >= AUTO_MIN_MS


def speakers_found_locally(mode: str, *, speakers: int | None, duration_ms: int,
                           channels: int, providers: Collection[str], overlap_ms: int) -> bool:
    """Pure: whether the local speaker engine labels a record's words: a mono record whose
    every part the local recognizer answered, cut in pauses (no overlap: the words'
    parts join as they are), when its speakers are told apart at all. The submit step
    then starts the turns beside the recognition; the poll step takes them."""
    return (channels == 1 and overlap_ms == 0 and set(providers) == {"local"}
            and speakers_apply(mode, speakers=speakers, duration_ms=duration_ms,
                               provider="local"))


def _words(items: Any, offset: int, low: int, high: int) -> tuple[Word, ...]:
    if not isinstance(items, list):
        return ()
    return tuple(
        Word(start_ms=min(max(int(w["start_ms"]) + offset, low), high),
             end_ms=min(max(int(w["end_ms"]) + offset, low), high), text=str(w["text"]),
             probability=_probability(w.get("probability")))
        for w in items
    )


def _probability(value: Any) -> float | None:
    """A word's confidence as the answer gives it; None when it gives none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return min(max(float(value), 0.0), 1.0)
    return None


def segments_of(parts: Sequence[tuple[PartPlan, bytes]]) -> list[Segment]:
    """Pure: the local answers' segments with their words, on the record's timeline.

    Times move and are held inside their part's span exactly as
    `parts.join` moves the utterances, so the segments are the joined
    utterances with words (parts cut in pauses, no overlap). Raises
    `ValueError` on an answer that is not the local recognizer's JSON.
    """
    segments: list[Segment] = []
    for plan, payload in sorted(parts, key=lambda item: item[0].index):
        low, high = plan.offset_ms, plan.offset_ms + plan.length_ms
        try:
            items = orjson.loads(payload)["segments"]
            found = []
            for s in items:
                text = str(s["text"]).strip()
                if not text:
                    continue
                start = min(max(int(s["start_ms"]) + plan.offset_ms, low), high)
                end = min(max(int(s["end_ms"]) + plan.offset_ms, start), high)
                found.append(Segment(start_ms=start, end_ms=end, text=text,
                                     words=_words(s.get("words"), plan.offset_ms, low, high)))
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError("not a local recognition answer") from exc
        segments.extend(sorted(found, key=lambda s: s.start_ms))
    return segments


def speech_of(parts: Sequence[tuple[PartPlan, bytes]]) -> list[Span] | None:
    """Pure: the speech regions the local recognizer's VAD found in each part, on the
    record's timeline and held inside their part's span; `None` when an answer has
    none (sequential decoding, or saved before they were kept): the speaker engine
    then runs its own VAD. Raises `ValueError` on an answer that is not the local JSON.
    """
    regions: list[Span] = []
    for plan, payload in sorted(parts, key=lambda item: item[0].index):
        low, high = plan.offset_ms, plan.offset_ms + plan.length_ms
        try:
            found = orjson.loads(payload).get("speech")
            if not isinstance(found, list):
                return None
            for start, end in found:
                first = min(max(int(start) + plan.offset_ms, low), high)
                last = min(max(int(end) + plan.offset_ms, first), high)
                if last > first:
                    regions.append(Span(start_ms=first, end_ms=last))
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
            raise ValueError("not a local recognition answer") from exc
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
