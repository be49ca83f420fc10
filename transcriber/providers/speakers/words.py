"""From speaker turns to labelled utterances: words take the speaker they overlap most.

A recognizer segment can span a change of speaker (Whisper merges short turns),
so speakers are assigned per word (faster-whisper's `word_timestamps=True`)
and a segment is split wherever the speaker of consecutive words changes.
Speakers are labelled "S1", "S2", … in the order they first speak.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from transcriber.ports import Segment, Turn, Word


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelledUtterance:
    start_ms: int
    end_ms: int
    text: str
    speaker: str
    words: tuple[Word, ...] = ()
    """The recognizer's words of this run (none when the segment had none)."""


def speaker_of(word: Word, turns: Sequence[Turn], starts: Sequence[int]) -> int | None:
    """The turn speaker overlapping the word most; the nearest turn when none overlaps.

    `starts` are the turns' start times (turns sorted, not overlapping).
    """
    if not turns:
        return None
    overlap: dict[int, int] = {}
    index = max(0, bisect.bisect_right(starts, word.start_ms) - 1)
    while index < len(turns) and turns[index].start_ms < word.end_ms:
        turn = turns[index]
        shared = min(word.end_ms, turn.end_ms) - max(word.start_ms, turn.start_ms)
        if shared > 0:
            overlap[turn.speaker] = overlap.get(turn.speaker, 0) + shared
        index += 1
    if overlap:
        return max(overlap, key=lambda speaker: overlap[speaker])
    middle = (word.start_ms + word.end_ms) / 2

    def gap(turn: Turn) -> float:
        return max(turn.start_ms - middle, middle - turn.end_ms, 0.0)

    return min(turns, key=gap).speaker


def split_by_speaker(segments: Sequence[Segment], turns: Sequence[Turn]) -> list[LabelledUtterance]:
    """Utterances cut where the speaker changes, labelled in order of first appearance.

    A segment without words (a recognizer that gives none) is one word: its
    speaker is the one it overlaps most. With no turns at all, everyone is S1.
    """
    ordered = sorted(turns, key=lambda t: t.start_ms)
    starts = [t.start_ms for t in ordered]
    names: dict[int, str] = {}
    result: list[LabelledUtterance] = []
    for segment in segments:
        words = segment.words or (
            Word(start_ms=segment.start_ms, end_ms=segment.end_ms, text=segment.text),
        )
        runs: list[tuple[int | None, list[Word]]] = []
        for word in words:
            speaker = speaker_of(word, ordered, starts)
            if runs and runs[-1][0] == speaker:
                runs[-1][1].append(word)
            else:
                runs.append((speaker, [word]))
        for k, (speaker, run) in enumerate(runs):
            text = "".join(w.text for w in run).strip()
            if not text:
                continue
            label = "S1" if speaker is None else names.setdefault(speaker, f"S{len(names) + 1}")
            # The first and last runs keep the segment's own edges; inner cuts fall on words.
            start = segment.start_ms if k == 0 else run[0].start_ms
            end = segment.end_ms if k == len(runs) - 1 else run[-1].end_ms
            result.append(LabelledUtterance(start_ms=start, end_ms=end, text=text, speaker=label,
                                            words=tuple(run) if segment.words else ()))
    return result


def talk_time(utterances: Sequence[LabelledUtterance]) -> dict[str, int]:
    """Milliseconds each speaker talks, summed over their utterances, in label order."""
    totals: dict[str, int] = {}
    for u in utterances:
        totals[u.speaker] = totals.get(u.speaker, 0) + max(0, u.end_ms - u.start_ms)
    return dict(sorted(totals.items(), key=lambda item: int(item[0][1:])))
