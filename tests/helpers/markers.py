"""Which tests a run leaves out whatever its `-m`: the benchmarks and the container build
run only when the marker expression names them (`-m bench`, `-m container`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

APART = ("bench", "container")


def left_out(markexpr: str, markers: Iterable[str]) -> bool:
    """True for a test marked with one of `APART` that `markexpr` does not name."""
    named = set(re.findall(r"\w+", markexpr))
    return any(name in APART and name not in named for name in markers)
