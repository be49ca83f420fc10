"""Bare faster-whisper on one file, in a process of its own, for the overhead bench.

`python -m tests.bench.bare_whisper FILE MODEL_DIR BEAM BATCH` loads the model and
runs faster-whisper's `BatchedInferencePipeline.transcribe` with its own VAD and word
times (what the service's default path asks of the model), and prints one JSON line:
the seconds the model took to load and to decode, and the words heard. Nothing of the
service is imported: this is the figure the service's overhead is measured against.
"""

from __future__ import annotations

import sys
import time

import orjson


def main(argv: list[str]) -> int:
    path, model_dir, beam, batch = argv[0], argv[1], int(argv[2]), int(argv[3])
    started = time.perf_counter()
    from faster_whisper import BatchedInferencePipeline, WhisperModel  # noqa: PLC0415

    model = WhisperModel(model_dir, device="cpu", compute_type="int8")
    loaded = time.perf_counter()
    segments, _ = BatchedInferencePipeline(model=model).transcribe(
        path, vad_filter=True, word_timestamps=True, beam_size=beam, batch_size=batch)
    words = sum(len(segment.text.split()) for segment in segments)  # the generator runs here
    done = time.perf_counter()
    sys.stdout.write(orjson.dumps({"load_s": loaded - started, "decode_s": done - loaded,
                                   "words": words}).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
