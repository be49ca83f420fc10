"""Freed heap goes back to the operating system (`providers.memory`)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from transcriber.providers.memory import release_free_memory


def _resident_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_memory_freed_in_another_thread_is_handed_back() -> None:
    kept: list[bytearray] = []

    def work() -> None:
        # 160 MB in blocks under the mmap threshold, all freed but the last: the arena
        # cannot shrink from its top, so the pages stay resident until trimmed.
        blocks = [bytearray(64 * 1024) for _ in range(2500)]
        kept.append(blocks[-1])
        del blocks

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    before = _resident_bytes()
    assert release_free_memory()
    assert _resident_bytes() < before - 100 * 2**20
