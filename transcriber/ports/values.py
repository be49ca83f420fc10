"""The value types the ports speak in: utterances, and the times of speech and words.

Frozen, slotted, keyword-only; no behaviour beyond their fields. The pure
functions over them live with whoever uses them (the pipeline's part planning,
the speaker engine's words).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """A stretch of time: speech found by a VAD, a window to embed."""

    start_ms: int
    end_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One stretch of one speaker; `speaker` counts from 0 in order of first appearance."""

    start_ms: int
    end_ms: int
    speaker: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Word:
    start_ms: int
    end_ms: int
    text: str
    """As the recognizer spells it, with its leading space where it has one."""
    probability: float | None = None
    """The recognizer's confidence in the word (0..1) where it tells one, else None."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Utterance:
    start_ms: int
    end_ms: int
    channel: int
    text: str
    speaker: str | None = None
    """`"S1"`, `"S2"`, … when speakers were told apart (structure version 2), else None."""
    words: tuple[Word, ...] = ()
    """The utterance's words with their times and confidence, where the recognizer gave them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """A recognizer segment with its words."""

    start_ms: int
    end_ms: int
    text: str
    words: tuple[Word, ...] = ()
