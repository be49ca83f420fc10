"""A fault-injecting file layer: a small disk that fills (see test_full_disk.py)."""

from __future__ import annotations

import errno
import io
from pathlib import Path
from typing import BinaryIO


class SmallDisk:
    """`capacity` bytes in all; writes past it fail with ENOSPC."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0

    def free_bytes(self, _path: Path) -> int:
        return self.capacity - self.used

    def open(self, path: Path) -> BinaryIO:
        disk = self

        class Handle(io.FileIO):
            def write(self, data: object) -> int:
                size = len(data)  # type: ignore[arg-type]
                if disk.used + size > disk.capacity:
                    raise OSError(errno.ENOSPC, "No space left on device")
                disk.used += size
                return super().write(data)  # type: ignore[arg-type]

        return Handle(path, "wb")
