"""The process's model runs: recognition and the speaker engine through one pool.

Both are CPU-bound native code (ctranslate2, onnxruntime) that release the GIL.
Run side by side they only slow each other (docs/speakers.md). So the speaker
engine waits for the pool the recognizer uses (`[recognizer] concurrency` runs at
a time, one by default), never competing with a recognition; its embedder runs
each input alone on one thread (`speakers.separator.EMBEDDER_THREADS`). `threads`
is what a recognition takes (`[recognizer] cpu_threads`, or ctranslate2's default
of at most 4). What runs
beside a recognition is a record's speaker turns being found at the lowest CPU
priority, on cycles the recognition leaves (`speakers.ahead`).

A model kept loaded between runs registers how to let it go (`keep_releasable`): a
run that needs the memory (a long recording's speakers, found in a child process)
asks the pool to release them while it is the only run going; they load again when
next used.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar, TypeVarTuple

from transcriber.settings import RecognizerSettings

R = TypeVar("R")
Ts = TypeVarTuple("Ts")

# ctranslate2's own default for `intra_threads` (0): four, fewer on a smaller machine.
DEFAULT_THREADS: Final = 4


def threads_per_run(cpu_threads: int, cpu_count: int | None) -> int:
    """Pure: the threads one model run takes; `cpu_threads` 0 means ctranslate2's default."""
    if cpu_threads > 0:
        return cpu_threads
    return max(1, min(DEFAULT_THREADS, cpu_count or 1))


class ModelRuns:
    """At most `concurrency` model runs at a time, in threads named `model-run`."""

    def __init__(self, *, concurrency: int, threads: int) -> None:
        self.threads = threads
        self._executor = ThreadPoolExecutor(max_workers=concurrency,
                                            thread_name_prefix="model-run")
        self._lock = threading.Lock()
        self._running = 0
        self._releasers: list[Callable[[], bool]] = []

    def keep_releasable(self, release: Callable[[], bool]) -> None:
        """`release` lets a loaded model go (True when it held one)."""
        self._releasers.append(release)

    def release_models(self) -> bool:
        """From inside a run: every registered model let go, when no other run is going
        (one might be using it); True when any was."""
        with self._lock:
            if self._running > 1:
                return False
            released = [release() for release in self._releasers]  # every one, not the first
        return any(released)

    def _counted(self, work: Callable[[*Ts], R], *args: *Ts) -> R:
        with self._lock:
            self._running += 1
        try:
            return work(*args)
        finally:
            with self._lock:
                self._running -= 1

    @classmethod
    def from_settings(cls, settings: RecognizerSettings) -> ModelRuns:
        return cls(concurrency=settings.concurrency,
                   threads=threads_per_run(settings.cpu_threads, os.cpu_count()))

    async def run(self, work: Callable[[*Ts], R], *args: *Ts) -> R:
        """`work(*args)` in the pool; a cancelled caller leaves a started run to finish
        (native code cannot be interrupted), and the next run waits for it."""
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._counted, work, *args)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
