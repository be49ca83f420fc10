"""The transcript's quality report: how much of the speech was heard, and a verdict.

A bad transcript otherwise looks exactly like a good one to everything that
passes it on (search, descriptions, exports, the bot's reply, webhooks). The
report is made once, when the recognizer's transcript is stored, from what the
recognizer said about its own work (docs/recognition.md, "Quality report"):

- `speech`: the speech its VAD found (None when it did not say: then the
  utterances' own time stands for it);
- `unclear`: speech whose text it rejected (never saved as text);
- `repeats_removed`: looped lines it dropped;
- the words' probabilities (share below `LOW_WORD_PROBABILITY`).

The verdict is a pure function of those numbers (`verdict_of`), its reasons
stable machine words. Everything here is pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

import orjson

from transcriber.domain.transcripts import Span, Utterance

Verdict = Literal["good", "check", "poor"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
Reason = Literal["no_text", "unclear_speech", "low_confidence", "repeats_removed"]
# In this order in a report (the worst first).
REASONS: tuple[Reason, ...] = get_args(Reason)

# A word the recognizer gives less than this probability is "low confidence"
# (underlined in the card; counted in `low_confidence_share`).
LOW_WORD_PROBABILITY: Final = 0.5
# good: at most this share of the speech unclear, and at most this share of the
# words low-confidence, and nothing removed.
GOOD_UNCLEAR_SHARE: Final = 0.02
GOOD_LOW_CONFIDENCE_SHARE: Final = 0.15
# poor: at least this share of the speech unclear, or no text at all over at
# least NO_TEXT_SPEECH_MS of speech.
POOR_UNCLEAR_SHARE: Final = 0.5
NO_TEXT_SPEECH_MS: Final = 10_000
# Unclear spans closer than this merge into one (a listener hears them as one
# stretch); at most MAX_SPANS are kept (the earliest), the seconds count all.
MERGE_GAP_MS: Final = 1_000
MAX_SPANS: Final = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class Quality:
    verdict: Verdict
    reasons: tuple[Reason, ...]
    speech_ms: int
    unclear_ms: int
    unclear_spans: tuple[Span, ...]
    repeats_removed: int
    low_confidence_share: float | None
    """Of the words with a probability; None when the recognizer gave none (SpeechKit)."""
    model: str | None = None
    """The model(s) the report is about (the answers' own, several joined by ", ");
    None in a report made before it was kept."""

    def as_dict(self) -> dict[str, Any]:
        """The public shape (DESIGN.md section 12), also how it is stored."""
        return {
            "verdict": self.verdict, "reasons": list(self.reasons),
            "speech_seconds": round(self.speech_ms / 1000, 1),
            "unclear_seconds": round(self.unclear_ms / 1000, 1),
            "unclear_spans": [{"start_ms": s.start_ms, "end_ms": s.end_ms}
                              for s in self.unclear_spans],
            "repeats_removed": self.repeats_removed,
            "low_confidence_share": self.low_confidence_share,
            "model": self.model,
        }

    def to_json(self) -> str:
        return orjson.dumps(self.as_dict()).decode()


def quality_from_json(stored: str | None) -> Quality | None:
    """The stored report; None when there is none (recognized before reports were
    made) or it cannot be read (then the record shows no report, never a wrong one)."""
    if not stored:
        return None
    try:
        data = orjson.loads(stored)
        verdict = data["verdict"]
        reasons = tuple(r for r in data["reasons"] if r in REASONS)
        share = data["low_confidence_share"]
        if verdict not in VERDICTS:
            return None
        return Quality(
            verdict=verdict, reasons=reasons,
            speech_ms=round(float(data["speech_seconds"]) * 1000),
            unclear_ms=round(float(data["unclear_seconds"]) * 1000),
            unclear_spans=tuple(Span(start_ms=int(s["start_ms"]), end_ms=int(s["end_ms"]))
                                for s in data["unclear_spans"]),
            repeats_removed=int(data["repeats_removed"]),
            low_confidence_share=None if share is None else float(share),
            model=model if isinstance(model := data.get("model"), str) else None,
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def merged(spans: Iterable[Span], *, gap_ms: int = 0) -> list[Span]:
    """Pure: the spans sorted and joined where they overlap or lie within `gap_ms`."""
    result: list[Span] = []
    for span in sorted((s for s in spans if s.end_ms > s.start_ms),
                       key=lambda s: (s.start_ms, s.end_ms)):
        if result and span.start_ms <= result[-1].end_ms + gap_ms:
            last = result[-1]
            result[-1] = Span(start_ms=last.start_ms, end_ms=max(last.end_ms, span.end_ms))
        else:
            result.append(span)
    return result


def total_ms(spans: Iterable[Span]) -> int:
    return sum(s.end_ms - s.start_ms for s in merged(spans))


def low_confidence_share(utterances: Sequence[Utterance]) -> float | None:
    """Pure: the share of words below `LOW_WORD_PROBABILITY`, among the words that
    carry a probability; None when none does."""
    known = [w.probability for u in utterances for w in u.words if w.probability is not None]
    if not known:
        return None
    low = sum(1 for p in known if p < LOW_WORD_PROBABILITY)
    return round(low / len(known), 3)


def verdict_of(*, speech_ms: int, unclear_ms: int, has_text: bool, repeats_removed: int,
               low_share: float | None) -> tuple[Verdict, tuple[Reason, ...]]:
    """Pure: the verdict and its reasons from the numbers (thresholds above)."""
    unclear_share = unclear_ms / speech_ms if speech_ms > 0 else 0.0
    no_text = not has_text and speech_ms >= NO_TEXT_SPEECH_MS
    found: set[Reason] = set()
    if no_text:
        found.add("no_text")
    if unclear_share > GOOD_UNCLEAR_SHARE:
        found.add("unclear_speech")
    if low_share is not None and low_share > GOOD_LOW_CONFIDENCE_SHARE:
        found.add("low_confidence")
    if repeats_removed > 0:
        found.add("repeats_removed")
    reasons = tuple(r for r in REASONS if r in found)
    if no_text or unclear_share >= POOR_UNCLEAR_SHARE:
        return "poor", reasons
    return ("check" if reasons else "good"), reasons


def assess(utterances: Sequence[Utterance], *, speech: Sequence[Span] | None,
           unclear: Sequence[Span], repeats_removed: int) -> Quality:
    """Pure: the report of a transcript from what the recognizer said of it.

    `speech` None (the recognizer did not say): the utterances' time stands for
    it. The unclear spans count as speech either way (they were heard as speech
    whose text was rejected), so the unclear share never passes 1.
    """
    heard = list(speech) if speech is not None else [
        Span(start_ms=u.start_ms, end_ms=u.end_ms) for u in utterances if u.text.strip()]
    unclear_spans = merged(unclear, gap_ms=MERGE_GAP_MS)
    speech_ms = total_ms([*heard, *unclear])
    unclear_ms = total_ms(unclear)
    share = low_confidence_share(utterances)
    verdict, reasons = verdict_of(
        speech_ms=speech_ms, unclear_ms=unclear_ms,
        has_text=any(u.text.strip() for u in utterances),
        repeats_removed=repeats_removed, low_share=share)
    return Quality(verdict=verdict, reasons=reasons, speech_ms=speech_ms,
                   unclear_ms=unclear_ms, unclear_spans=tuple(unclear_spans[:MAX_SPANS]),
                   repeats_removed=max(repeats_removed, 0), low_confidence_share=share)


# An utterance at least this share of whose words are low-confidence is not
# material for a title or a brief (it is still in the transcript, underlined).
UNSURE_UTTERANCE_SHARE: Final = 0.5


def describable(utterances: Sequence[Utterance],
                quality: Quality | None) -> tuple[Utterance, ...]:
    """Pure: the lines the describer may make a title, a brief and topics of.

    Unclear speech never reaches the transcript and removed repeats are gone,
    so the gate is about what is left: nothing of a `poor` transcript (its few
    words are the least reliable of all: a title made of them would present
    junk as the recording's subject), and no line most of whose words the
    recognizer was unsure of. A line a person corrected has no words left and
    always passes.
    """
    if quality is not None and quality.verdict == "poor":
        return ()
    kept = []
    for u in utterances:
        known = [w.probability for w in u.words if w.probability is not None]
        low = sum(1 for p in known if p < LOW_WORD_PROBABILITY)
        if known and low / len(known) >= UNSURE_UTTERANCE_SHARE:
            continue
        kept.append(u)
    return tuple(kept)
