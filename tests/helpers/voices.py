"""Speech-like signals for the channel tests: one voice, or two people on two channels."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

RATE = 16_000


def speechlike(seed: int, seconds: float = 6.0) -> npt.NDArray[np.float32]:
    """Speech-like: noise through a moving formant, in bursts with pauses between."""
    rng = np.random.default_rng(seed)
    n = int(RATE * seconds)
    t = np.arange(n) / RATE
    carrier = np.sin(2 * np.pi * (120 + 40 * seed) * t) + 0.5 * rng.normal(0, 1, n)
    envelope = (np.sin(2 * np.pi * 0.7 * t + seed) > -0.2).astype(float)
    return np.asarray(0.2 * carrier * envelope, dtype=np.float32)


def two_party_call() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Two people, each on a channel, taking turns of 1.5 s."""
    a, b = speechlike(1), speechlike(2)
    turn = (np.arange(a.shape[0]) // int(1.5 * RATE)) % 2 == 0
    return a * turn, b * ~turn
