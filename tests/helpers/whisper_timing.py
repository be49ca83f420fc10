"""Timing faster-whisper's word alignment inside the service's own recognitions."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def timed_alignment(monkeypatch: pytest.MonkeyPatch, *,
                    width: Callable[[], int] | None = None) -> list[float]:
    """Seconds of each `find_alignment` call (ctranslate2's `align`) from now on; with
    `width`, each call's median filter width is what it gives then."""
    from faster_whisper import WhisperModel  # noqa: PLC0415 - heavy import

    spent: list[float] = []
    original = WhisperModel.find_alignment

    def find_alignment(self: Any, *args: Any, **kwargs: Any) -> Any:
        if width is not None:
            kwargs["median_filter_width"] = width()
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    monkeypatch.setattr(WhisperModel, "find_alignment", find_alignment)
    return spent
