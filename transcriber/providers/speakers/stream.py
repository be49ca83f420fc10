"""Speech regions and features of a long recording without holding its samples.

`decode_audio` and the VAD over a whole recording each hold several copies of
it (measured on 20 minutes: +200 MiB decoding, +224 MiB in the VAD; 3 hours
would be ~3.8 GB). Here the audio is decoded in blocks of `BLOCK_SECONDS`,
each block is run through the VAD and the log-mel front end, and only the
features (8 KB a second, float16) and the regions are kept. The features equal
`log_mel` of the whole (to float16's precision): a block's last partial frame
is carried into the next.
A speech region cut by a block's edge is joined again when the VAD's two
halves meet there (`join_regions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from transcriber.domain.voices import Floats
from transcriber.ports import Span
from transcriber.providers.speakers.features import HOP_LENGTH, N_FFT, N_MELS, log_mel

SAMPLE_RATE: Final = 16_000
# Each block's decoding and VAD hold a few copies of it (~10 MB a minute).
BLOCK_SECONDS: Final = 120
# Two halves of a region cut at a block's edge end and start within this of it.
EDGE_MS: Final = 300
# Float16: half the memory of float32 (86 MB for 3 hours, not 173). Log10 mel powers
# lie within about -10..5, where float16 keeps 3 significant digits; the inputs run,
# the turns and the DER of both bench conversations came out the same as with float32.
HalfFloats = npt.NDArray[np.float16]


def pcm_blocks(path: Path, *, block_samples: int = BLOCK_SECONDS * SAMPLE_RATE,
               channel: int | None = None) -> Iterator[Floats]:
    """16 kHz mono float32 blocks of `block_samples` (the last shorter), decoded as
    faster-whisper's `decode_audio` decodes (its own frame helpers), never all at once;
    with `channel` (0, 1) that channel of a stereo file alone, not the mix."""
    import av  # noqa: PLC0415 - faster-whisper's dependency, loaded when used
    from faster_whisper import audio as fw  # noqa: PLC0415

    resampler = av.audio.resampler.AudioResampler(
        format="s16", layout="mono" if channel is None else "stereo", rate=SAMPLE_RATE)
    pending: list[np.ndarray] = []
    held = 0
    with av.open(str(path), mode="r", metadata_errors="ignore") as container:
        # faster-whisper's own frame helpers: the same samples as its `decode_audio`.
        frames = fw._ignore_invalid_frames(container.decode(audio=0))
        frames = fw._resample_frames(fw._group_frames(frames, 500_000), resampler)
        for frame in frames:
            samples = frame.to_ndarray().reshape(-1)
            # Packed stereo s16 interleaves the channels: every second sample is one's.
            pending.append(samples if channel is None else samples[channel::2])
            held += pending[-1].shape[0]
            while held >= block_samples:
                joined = np.concatenate(pending)
                yield joined[:block_samples].astype(np.float32) / 32768.0
                pending, held = [joined[block_samples:]], joined.shape[0] - block_samples
    if held:
        yield np.concatenate(pending).astype(np.float32) / 32768.0


def array_blocks(samples: Floats, *,
                 block_samples: int = BLOCK_SECONDS * SAMPLE_RATE) -> Iterator[Floats]:
    """16 kHz mono samples already decoded (the recognizer's), in the blocks
    `pcm_blocks` would decode them in: `speech_and_features` gives the same bytes."""
    for first in range(0, samples.shape[0], block_samples):
        yield samples[first:first + block_samples]


def join_regions(first: Sequence[Span], second: Sequence[Span], edge_ms: int,
                 *, reach_ms: int = EDGE_MS) -> list[Span]:
    """Pure: regions of two neighbouring blocks; one cut by the edge at `edge_ms` is
    one again when the first block's last ends and the second's first starts near it."""
    joined = list(first)
    rest = list(second)
    if (joined and rest and joined[-1].end_ms >= edge_ms - reach_ms
            and rest[0].start_ms <= edge_ms + reach_ms):
        joined[-1] = Span(start_ms=joined[-1].start_ms, end_ms=rest[0].end_ms)
        rest = rest[1:]
    return joined + rest


def speech_and_features(
    blocks: Iterable[Floats], vad: Callable[[Floats], list[Span]] | None
) -> tuple[list[Span], HalfFloats]:
    """The speech regions (the `vad` of each block, on the recording's timeline; none
    without a `vad`) and the log-mel features of all blocks as if they were one array,
    kept as float16."""
    regions: list[Span] = []
    # Each block's features are kept as float16 at once: float32 blocks of 3 hours held
    # 173 MB until the end, and the float16 copy made there 86 MB more beside them.
    features: list[HalfFloats] = []
    carry = np.zeros(0, dtype=np.float32)
    offset = 0  # samples
    for block in blocks:
        offset_ms = offset * 1000 // SAMPLE_RATE
        if vad is not None:
            found = [Span(start_ms=r.start_ms + offset_ms, end_ms=r.end_ms + offset_ms)
                     for r in vad(block)]
            regions = join_regions(regions, found, offset_ms)
        offset += block.shape[0]
        buffer = np.concatenate([carry, block])
        if buffer.shape[0] >= N_FFT:
            count = (buffer.shape[0] - N_FFT) // HOP_LENGTH + 1
            features.append(log_mel(buffer).astype(np.float16))
            carry = buffer[count * HOP_LENGTH:]
        else:
            carry = buffer
    return regions, _joined(features)


def _joined(blocks: list[HalfFloats]) -> HalfFloats:
    """The blocks as one float16 array, each freed once copied: `np.concatenate`
    would hold the features twice at the end."""
    joined = np.empty((sum(b.shape[0] for b in blocks), N_MELS), dtype=np.float16)
    position = 0
    blocks.reverse()
    while blocks:
        block = blocks.pop()
        joined[position:position + block.shape[0]] = block
        position += block.shape[0]
    return joined
