"""faster-whisper's model with the word alignment's median filter narrowed to one frame.

Word times (asked for when speakers are told apart) come from ctranslate2's
`Whisper.align`: the decoder runs over each clip's tokens again, and the
attention of its alignment heads is smoothed by a median filter along time
before the dynamic time warping; faster-whisper always asks for a width of 7,
as OpenAI's Whisper does. The service only places words in speaker turns,
which change in pauses of 0.3 s or more, so it asks for none: on the speaker
bench's conversations that took about a sixth off the alignment (5-19 % inside
the recognitions, 18 % for `align` alone on the same inputs), moved the word times
by 8-11 ms on average (95th percentile 20-40 ms, one or two of Whisper's 20-ms
steps) and put no word in another speaker's turn (docs/recognition.md,
"Word times").
"""

from __future__ import annotations

from typing import Any, Final

from faster_whisper import WhisperModel

from transcriber.providers.whisper_fallback import generate_deterministic

ALIGNMENT_MEDIAN_WIDTH: Final = 1


class WordAlignedWhisper(WhisperModel):  # type: ignore[misc]  # faster-whisper is untyped
    """`WhisperModel` aligning words with `ALIGNMENT_MEDIAN_WIDTH` (faster-whisper's
    `add_word_timestamps` calls `find_alignment` without a width), its fallback
    deterministic (`whisper_fallback`)."""

    def generate_with_fallback(self, encoder_output: Any, prompt: list[int], tokenizer: Any,
                               options: Any) -> tuple[Any, float, float, float]:
        return generate_deterministic(self, encoder_output, prompt, tokenizer, options)

    def find_alignment(self, tokenizer: Any, text_tokens: Any, encoder_output: Any,
                       num_frames: Any, median_filter_width: int = ALIGNMENT_MEDIAN_WIDTH,
                       ) -> Any:
        return super().find_alignment(tokenizer, text_tokens, encoder_output, num_frames,
                                      median_filter_width=median_filter_width)
