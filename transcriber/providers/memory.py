"""Freed heap handed back to the operating system after each big piece of work.

glibc keeps what a thread frees in that thread's arena, for that thread to reuse:
a Whisper part's buffers (the encoder's attention over a batch of clips, some
300 MB), freed in the recognizer's thread, stayed resident while the speaker
engine allocated its own in another thread (a 3-hour record peaked at
1082 MiB so, 967 MiB trimmed: docs/recognition.md, "Memory"). `malloc_trim(0)` returns the free
pages of every arena, as Dask's workers do for the same reason. Where the C
library has no `malloc_trim` (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_free_memory() -> bool:
    """Hand the heap's free pages back; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def releasing(work: Callable[P, R]) -> Callable[P, R]:
    """`work`, then the free pages handed back (its own buffers are freed by then),
    whether it returned or raised."""

    @functools.wraps(work)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return work(*args, **kwargs)
        finally:
            release_free_memory()

    return run
