"""A long recording's speaker turns found in a process of its own.

Turns of hours of audio take hundreds of MB (the features of 3 hours alone are 86 MB,
the embedder's sessions and every block's VAD on top): held in the service beside a
recognition, they took one `serve` past 1 GiB. In a child process the memory is the
child's and goes back to the system when it exits, whatever glibc would have kept.
The child (`python -m transcriber.providers.speakers.isolated`) reads the request as
JSON on its standard input and writes the turns as JSON on its standard output.
"""

from __future__ import annotations

import base64
import contextlib
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import orjson
import structlog

from transcriber.core.errors import TranscriberError
from transcriber.ports import Span, Turn
from transcriber.providers.speakers.embedder import EMBEDDING_DIM, SpeakerModelUnavailable
from transcriber.providers.speakers.turns import FoundTurns

# The child's exit status for a speaker model that cannot be had (installation problem).
MODEL_UNAVAILABLE: Final = 3
# How often a waiting caller looks at its stop flag.
STOP_POLL_SECONDS: Final = 0.2


class IsolatedFailed(TranscriberError):
    """The child process failed (killed, out of memory, a bug): no turns came."""


class IsolatedJob:
    """One child process finding one recording's turns."""

    def __init__(self, audio: Path, *, num_speakers: int | None,
                 speech: Sequence[Span] | None = None, threads: int = 1) -> None:
        request = {"audio": str(audio), "num_speakers": num_speakers, "threads": threads,
                   "speech": None if speech is None else [[s.start_ms, s.end_ms]
                                                          for s in speech]}
        self._process = subprocess.Popen(  # noqa: S603 - our own module, no shell
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._request = orjson.dumps(request)
        self._lock = threading.Lock()
        self._answer: tuple[bytes, bytes] | None = None

    @property
    def pid(self) -> int:
        return self._process.pid

    def wait(self, stop: threading.Event | None = None) -> FoundTurns:
        """The turns (and the windows embedded), once the child has found them; the child
        is killed (and `IsolatedFailed` raised) when `stop` is set first."""
        with self._lock:
            if self._answer is None:
                self._answer = self._communicate(stop)
        out, err = self._answer
        code = self._process.returncode
        if code == MODEL_UNAVAILABLE:
            raise SpeakerModelUnavailable(err.decode("utf-8", "replace").strip()[-300:])
        if code != 0:
            raise IsolatedFailed(f"the speaker process ended with status {code}")
        answer = orjson.loads(out)
        windows = [Span(start_ms=int(a), end_ms=int(b)) for a, b in answer["windows"]]
        vectors = np.frombuffer(base64.b64decode(answer["vectors"]), dtype="<f4")
        return FoundTurns(turns=[Turn(start_ms=int(a), end_ms=int(b), speaker=int(s))
                            for a, b, s in answer["turns"]],
                     windows=windows,
                     vectors=vectors.astype(np.float32).reshape(len(windows), EMBEDDING_DIM))

    def _communicate(self, stop: threading.Event | None) -> tuple[bytes, bytes]:
        if stop is None:
            return self._process.communicate(self._request)
        result: dict[str, tuple[bytes, bytes]] = {}

        def talk() -> None:
            result["answer"] = self._process.communicate(self._request)

        feeding = threading.Thread(target=talk, name="speaker-process-io", daemon=True)
        feeding.start()
        while feeding.is_alive():
            if stop.is_set():
                self.kill()
            feeding.join(STOP_POLL_SECONDS)
        return result.get("answer", (b"", b""))

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()


def _find(request: dict[str, Any]) -> FoundTurns:
    """The child's work: the recording's turns, block by block (`stream`)."""
    from transcriber.providers.speakers.embedder import SpeakerEmbedder  # noqa: PLC0415
    from transcriber.providers.speakers.stream import (  # noqa: PLC0415
        pcm_blocks,
        speech_and_features,
    )
    from transcriber.providers.speakers.turns import found_from_features  # noqa: PLC0415
    from transcriber.providers.speakers.vad import speech_regions  # noqa: PLC0415

    embedder = SpeakerEmbedder(threads=int(request["threads"]))
    handed = request["speech"]
    regions, features = speech_and_features(pcm_blocks(Path(request["audio"])),
                                            speech_regions if handed is None else None)
    if handed is not None:
        regions = [Span(start_ms=int(a), end_ms=int(b)) for a, b in handed]
    return found_from_features(features, regions, embedder,
                               num_speakers=request["num_speakers"])


def main() -> int:
    # Standard output carries the answer: anything logged goes to standard error.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    request = orjson.loads(sys.stdin.buffer.read())
    try:
        found = _find(request)
    except SpeakerModelUnavailable as exc:
        sys.stderr.write(str(exc))
        return MODEL_UNAVAILABLE
    sys.stdout.buffer.write(orjson.dumps({
        "turns": [[t.start_ms, t.end_ms, t.speaker] for t in found.turns],
        "windows": [[w.start_ms, w.end_ms] for w in found.windows],
        # The embeddings as little-endian float32 (base64): biometric data, read only by
        # the parent from this pipe, never written anywhere else.
        "vectors": base64.b64encode(found.vectors.astype("<f4").tobytes()).decode()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
