"""A progress bar on a terminal (tqdm on stderr), nothing otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Never

from tqdm import tqdm


@contextmanager
def file_progress(what: str) -> Iterator[Callable[[int], Callable[[int], None]]]:
    bars: list[tqdm[Never]] = []

    def start(total: int) -> Callable[[int], None]:
        bar: tqdm[Never] = tqdm(total=total, desc=what, unit="file", file=sys.stderr,
                                disable=not sys.stderr.isatty())
        bars.append(bar)

        def step(done: int) -> None:
            bar.update(done)

        return step

    try:
        yield start
    finally:
        for bar in bars:
            bar.close()
