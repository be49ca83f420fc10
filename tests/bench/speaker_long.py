"""The speaker engine alone on a long recording: time per phase and peak RSS.

Run as a program so its peak RSS is the speaker engine's own (the bench test
`test_speakers_long.py` starts it): `python -m tests.bench.speaker_long FILE
[stream|whole]`. `stream` (the default) is what `LocalSpeakerSeparator` does:
decode, VAD and features block by block (`speaker_stream`); `whole` decodes
the whole file with faster-whisper's `decode_audio` and runs the VAD and the
features over it, as the separator did before. With a third argument, a JSON
file of the known turns (`[[speaker, start_ms, end_ms], …]`), the result also
carries the DER and its parts (collar 0.25 s): the speaker confusion is what the
window and threshold rules change. One JSON line is printed.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from tests.helpers.der import Segment, diarization_error, hypothesis_of
from transcriber.providers.speakers.clustering import DEFAULT_THRESHOLD
from transcriber.providers.speakers.embedder import SpeakerEmbedder
from transcriber.providers.speakers.features import SAMPLE_RATE, Features, log_mel
from transcriber.providers.speakers.refine import label_windows
from transcriber.providers.speakers.stream import pcm_blocks, speech_and_features
from transcriber.providers.speakers.turns import WindowPlan, plan_windows, turns_from_windows
from transcriber.providers.speakers.vad import speech_regions


def measure(path: str, mode: str = "stream", reference: str | None = None) -> dict[str, Any]:
    seconds: dict[str, float] = {}
    peaks: dict[str, int] = {}
    started = time.perf_counter()
    embedder = SpeakerEmbedder()
    seconds["load"] = time.perf_counter() - started
    peaks["load"] = _peak_mib()
    mark = time.perf_counter()
    if mode == "whole":
        from faster_whisper.audio import decode_audio  # noqa: PLC0415 - heavy import

        samples = decode_audio(path, sampling_rate=SAMPLE_RATE)
        seconds["decode"] = time.perf_counter() - mark
        mark = time.perf_counter()
        regions = speech_regions(samples)
        seconds["vad"] = time.perf_counter() - mark
        mark = time.perf_counter()
        features: Features = log_mel(samples)
        seconds["features"] = time.perf_counter() - mark
        del samples
    else:
        regions, features = speech_and_features(pcm_blocks(Path(path)), speech_regions)
        seconds["decode_vad_features"] = time.perf_counter() - mark
    peaks["features"] = _peak_mib()
    plan = WindowPlan()
    groups = [g for g in (plan_windows([r], plan) for r in regions) if g]
    mark = time.perf_counter()
    refinement = label_windows(groups, features, _Timed(embedder, seconds), every=plan.every,
                               num_speakers=None, threshold=DEFAULT_THRESHOLD)
    seconds["cluster_and_refine"] = time.perf_counter() - mark - seconds["embed"]
    mark = time.perf_counter()
    windows = [w for g in groups for w in g]
    turns = turns_from_windows(regions, windows, refinement.labels)
    seconds["turns"] = time.perf_counter() - mark
    total = time.perf_counter() - started
    minutes = features.shape[0] / 100 / 60
    result: dict[str, Any] = {
        "mode": mode, "audio_minutes": round(minutes, 2),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "total_seconds": round(total, 2),
        "seconds_per_audio_minute": round(total / minutes, 3),
        "peak_rss_mib": _peak_mib(), "peak_rss_mib_after": peaks,
        "regions": len(regions), "windows": len(windows), "coarse": refinement.coarse,
        "refined": refinement.refined, "inputs": embedder.inputs_run,
        "speakers": len(set(refinement.labels)), "turns": len(turns),
    }
    if reference is not None:
        known = [Segment(speaker=str(name), start_ms=int(start), end_ms=int(end))
                 for name, start, end in orjson.loads(Path(reference).read_bytes())]
        score = diarization_error(known, hypothesis_of(turns))
        result |= {"der": round(score.der, 4), "confusion": round(score.confusion, 4),
                   "missed": round(score.missed, 4), "false_alarm": round(score.false_alarm, 4)}
    return result


def _peak_mib() -> int:
    """This process's own peak RSS: VmHWM, which starts anew at exec. `ru_maxrss` keeps
    the parent's resident size at the fork (Linux carries it over exec), which made the
    3-hour run read the 800 MiB the bench's pytest held after building the recording."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


class _Timed:
    """The embedder, its time added up apart from the clustering's."""

    def __init__(self, embedder: SpeakerEmbedder, seconds: dict[str, float]) -> None:
        self._embedder = embedder
        self._seconds = seconds
        seconds["embed"] = 0.0

    def embed(self, features: Any, windows: Any, *, cache: Any = None) -> Any:
        mark = time.perf_counter()
        try:
            return self._embedder.embed(features, windows, cache=cache)
        finally:
            self._seconds["embed"] += time.perf_counter() - mark


if __name__ == "__main__":
    sys.stdout.write(orjson.dumps(measure(*sys.argv[1:4])).decode() + "\n")
