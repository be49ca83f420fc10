"""Whisper's fallback without sampling: a window whose decoding fails Whisper's own checks
is decoded again by a fixed sequence of deterministic decodings, so the same audio gives
the same words in any process, on any worker thread, however often it is decoded.

faster-whisper's fallback samples at temperatures 0.2, 0.4, 0.6, and ctranslate2 draws
from one random generator per worker thread, seeded once when the thread first draws:
`ctranslate2.set_random_seed` before a recognition sets only the seed of threads not yet
drawing, so a second recognition in the same process drew on and gave other words
(docs/speakers.md, "Same audio, same transcript"). No per-call seed exists (ctranslate2
4.8), so the fallback here does not sample at all: each step is a beam search that leans
further: a longer beam (patience), a wider one, and last a mild repetition penalty
against a loop. No step forbids repeated n-grams: a
phrase a person really says again must stay (the guard tells a loop from a repetition
by the audio, `whisper_guard`).

The checks and the choice are faster-whisper's (`WhisperModel.generate_with_fallback`,
1.2): a step passes when its text compresses no better than the threshold and its
average log probability is not under the threshold (a window that is probably silence
passes); when none passes, the best average log probability among the steps under the
compression threshold (else among all) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from transcriber.providers.whisper_repeats import compression_ratio


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodingStep:
    """One deterministic decoding of a window (ctranslate2 `generate` options; the beam
    `beam_more` wider than the settings' `beam_size`)."""

    patience: float = 1.0
    repetition_penalty: float = 1.0
    beam_more: int = 0


# The first step is Whisper's own decoding at temperature 0 (beam search, the settings'
# beam size); the fallback steps replace the three sampled temperatures one for one. A
# longer, then a wider beam first; a repetition penalty only last: earlier, it took two
# of six copies out of a sentence said six times (a window full of a real repetition
# compresses too well, and the penalized decoding then passed). Measured on the
# invented-text corpus (docs/recognition.md, "A fallback that does not sample").
FALLBACK: Final = (
    DecodingStep(),
    DecodingStep(patience=2.0),
    DecodingStep(patience=2.0, beam_more=3),
    DecodingStep(patience=2.0, repetition_penalty=1.1),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """What the checks need of one step's decoding."""

    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float


def passes(attempt: Attempt, options: Any) -> bool:
    """Pure: whether a step's decoding is kept without trying the next (faster-whisper's
    checks, on its `TranscriptionOptions`)."""
    too_repetitive = (options.compression_ratio_threshold is not None
                      and attempt.compression_ratio > options.compression_ratio_threshold)
    unlikely = (options.log_prob_threshold is not None
                and attempt.avg_logprob < options.log_prob_threshold)
    silence = (unlikely and options.no_speech_threshold is not None
               and attempt.no_speech_prob > options.no_speech_threshold)
    return silence or not (too_repetitive or unlikely)


def chosen(attempts: Sequence[Attempt], options: Any) -> int:
    """Pure: the index of the attempt kept when none passed: the highest average log
    probability among those under the compression threshold, else among all (the first
    on a tie, as `max` picks)."""
    threshold = options.compression_ratio_threshold
    below = [i for i, a in enumerate(attempts)
             if threshold is None or a.compression_ratio <= threshold]
    return max(below or range(len(attempts)), key=lambda i: attempts[i].avg_logprob)


def generate_deterministic(whisper: Any, encoder_output: Any, prompt: list[int],
                           tokenizer: Any, options: Any, *,
                           steps: Sequence[DecodingStep] | None = None
                           ) -> tuple[Any, float, float, float]:
    """faster-whisper's `generate_with_fallback` with `steps` for its temperatures: the
    same answer (result, average log probability, temperature — always 0 —, compression
    ratio)."""
    max_initial = round(options.max_initial_timestamp / whisper.time_precision)
    max_length = whisper.max_length
    if options.max_new_tokens is not None:
        max_length = min(len(prompt) + options.max_new_tokens, whisper.max_length)
    decoded: list[tuple[Any, float, float]] = []
    attempts: list[Attempt] = []
    for step in steps or FALLBACK:
        result = whisper.model.generate(
            encoder_output, [prompt], beam_size=options.beam_size + step.beam_more,
            patience=step.patience,
            length_penalty=options.length_penalty,
            repetition_penalty=options.repetition_penalty * step.repetition_penalty,
            no_repeat_ngram_size=options.no_repeat_ngram_size, max_length=max_length,
            return_scores=True, return_no_speech_prob=True,
            suppress_blank=options.suppress_blank, suppress_tokens=options.suppress_tokens,
            max_initial_timestamp_index=max_initial)[0]
        tokens = result.sequences_ids[0]
        # The average log probability from the returned score, as faster-whisper does.
        avg_logprob = result.scores[0] * (len(tokens) ** options.length_penalty) / (
            len(tokens) + 1)
        ratio = compression_ratio(tokenizer.decode(tokens).strip())
        decoded.append((result, avg_logprob, ratio))
        attempts.append(Attempt(avg_logprob=avg_logprob, compression_ratio=ratio,
                                no_speech_prob=result.no_speech_prob))
        if passes(attempts[-1], options):
            return result, avg_logprob, 0.0, ratio
    result, avg_logprob, ratio = decoded[chosen(attempts, options)]
    return result, avg_logprob, 0.0, ratio
