"""Word and character error rates, for asserting on recognition quality (never exact text)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def _normalize(text: str) -> str:
    text = text.lower().replace("ё", "е").replace("-", " ")
    return re.sub(r"[^\w\s]", " ", text)


def _distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i]
        for j, h in enumerate(hyp, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (r != h)))
        previous = current
    return previous[-1]


def wer(reference: str, hypothesis: str) -> float:
    ref = _normalize(reference).split()
    return _distance(ref, _normalize(hypothesis).split()) / max(len(ref), 1)


def cer(reference: str, hypothesis: str) -> float:
    ref = "".join(_normalize(reference).split())
    return _distance(ref, "".join(_normalize(hypothesis).split())) / max(len(ref), 1)
