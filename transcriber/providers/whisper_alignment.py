"""faster-whisper's model with the word alignment's median filter narrowed to one frame.

Word times (asked for when speakers are separated) come from ctranslate2's
`Whisper.align`: the decoder runs over each clip's tokens again, and the
attention of its alignment heads is smoothed by a median filter along time
before the dynamic time warping; faster-whisper always asks for a width of 7,
as OpenAI's Whisper does. That filter runs over every token and frame of every
head in C++, and on a 2-core CPU it was about a quarter of the word times'
cost. Without it (width 1) the word times moved by 8 ms on average (95th
percentile 40 ms, under two of Whisper's 20-ms steps) on the 160-s
two-speaker conversation and 11 ms (20 ms) on the three synthetic voices, and
no word changed speaker on either: the words are only placed in speaker
turns, which change in pauses of 0.3 s or more (recognition.md, "The
alignment's median filter").
"""

from __future__ import annotations

from typing import Any, Final

from faster_whisper import WhisperModel

ALIGNMENT_MEDIAN_WIDTH: Final = 1


class WordAlignedWhisper(WhisperModel):  # type: ignore[misc]  # faster-whisper is untyped
    """`WhisperModel` aligning words with `ALIGNMENT_MEDIAN_WIDTH` (faster-whisper's
    `add_word_timestamps` calls `find_alignment` without a width)."""

    def find_alignment(self, tokenizer: Any, text_tokens: Any, encoder_output: Any,
                       num_frames: Any, median_filter_width: int = ALIGNMENT_MEDIAN_WIDTH,
                       ) -> Any:
        return super().find_alignment(tokenizer, text_tokens, encoder_output, num_frames,
                                      median_filter_width=median_filter_width)
