"""Whisper's fallback without sampling (`whisper_fallback`): faster-whisper's checks and
choice over a fixed sequence of deterministic decodings, on a fake ctranslate2 model."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from transcriber.providers.whisper_fallback import (
    FALLBACK,
    Attempt,
    DecodingStep,
    chosen,
    generate_deterministic,
    passes,
)

OPTIONS = SimpleNamespace(
    compression_ratio_threshold=2.4, log_prob_threshold=-1.0, no_speech_threshold=0.6,
    beam_size=5, length_penalty=1.0, repetition_penalty=1.0, no_repeat_ngram_size=0,
    suppress_blank=True, suppress_tokens=[-1], max_initial_timestamp=1.0,
    max_new_tokens=None)
LOOP = "и прохожу " * 40
CLEAR = "Сегодня утром я проснулся раньше обычного."


def _attempt(*, logprob: float = -0.3, ratio: float = 1.2, no_speech: float = 0.0) -> Attempt:
    return Attempt(avg_logprob=logprob, compression_ratio=ratio, no_speech_prob=no_speech)


def test_a_decoding_passes_unless_it_loops_or_is_unlikely() -> None:
    assert passes(_attempt(), OPTIONS)
    assert not passes(_attempt(ratio=3.0), OPTIONS)
    assert not passes(_attempt(logprob=-1.5), OPTIONS)
    # Unlikely and probably silence: kept (faster-whisper's rule).
    assert passes(_attempt(logprob=-1.5, no_speech=0.9), OPTIONS)


def test_when_none_passes_the_likeliest_under_the_compression_threshold_is_kept() -> None:
    tries = [_attempt(logprob=-0.2, ratio=3.0), _attempt(logprob=-1.4),
             _attempt(logprob=-1.2), _attempt(logprob=-1.2)]
    assert chosen(tries, OPTIONS) == 2  # the loop is likelier but over the threshold
    assert chosen([_attempt(logprob=-0.5, ratio=3.0), _attempt(logprob=-0.2, ratio=2.9)],
                  OPTIONS) == 1


@dataclass
class _Model:
    """ctranslate2's Whisper: one text per call, in order; the calls' options kept."""

    texts: list[str]
    logprob: float = -0.3
    calls: list[dict[str, Any]] = field(default_factory=list)

    def generate(self, features: Any, prompts: list[list[int]], **options: Any) -> list[Any]:
        self.calls.append(options)
        text = self.texts[len(self.calls) - 1]
        tokens = list(range(len(text.split())))
        return [SimpleNamespace(sequences_ids=[tokens], scores=[self.logprob],
                                no_speech_prob=0.01, text=text)]


def _whisper(model: _Model) -> Any:
    return SimpleNamespace(model=model, time_precision=0.02, max_length=448)


class _Tokenizer:
    def __init__(self, model: _Model) -> None:
        self.model = model

    def decode(self, tokens: list[int]) -> str:
        return self.model.texts[len(self.model.calls) - 1]


def test_the_fallback_never_samples_and_stops_at_the_first_decoding_that_passes() -> None:
    model = _Model(texts=[LOOP, LOOP, CLEAR, CLEAR])
    result, logprob, temperature, ratio = generate_deterministic(
        _whisper(model), None, [1, 2], _Tokenizer(model), OPTIONS)
    assert result.text == CLEAR
    assert temperature == 0.0
    assert ratio < 2.4
    assert logprob < 0
    assert len(model.calls) == 3
    for call, step in zip(model.calls, FALLBACK, strict=False):
        assert "sampling_temperature" not in call
        assert "sampling_topk" not in call
        assert call["beam_size"] == 5 + step.beam_more
        assert call["no_repeat_ngram_size"] == 0  # a real repetition may stay
        assert (call["patience"], call["repetition_penalty"]) == (
            step.patience, step.repetition_penalty)
    assert [c["repetition_penalty"] for c in model.calls] == sorted(
        c["repetition_penalty"] for c in model.calls)


def test_when_every_step_loops_the_likeliest_is_kept_and_nothing_more_is_tried() -> None:
    model = _Model(texts=[LOOP] * len(FALLBACK))
    result, _, temperature, ratio = generate_deterministic(
        _whisper(model), None, [1], _Tokenizer(model), OPTIONS,
        steps=[DecodingStep(), DecodingStep(repetition_penalty=1.2)])
    assert len(model.calls) == 2
    assert result.text == LOOP
    assert ratio > 2.4
    assert temperature == 0.0
