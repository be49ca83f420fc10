"""The embedder's numpy front end: Slaney mel filters, periodic Hamming, 10 ms frames."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from transcriber.providers.speakers.features import (
    _FILTERS,
    _WINDOW,
    N_FFT,
    SAMPLE_RATE,
    hz_to_mel,
    log_mel,
    mel_filterbank,
    mel_to_hz,
)


def test_the_slaney_scale_is_linear_below_1khz_and_logarithmic_above() -> None:
    assert float(hz_to_mel(np.array(1000.0))) == pytest.approx(15.0)
    assert float(hz_to_mel(np.array(500.0))) == pytest.approx(7.5)
    assert float(hz_to_mel(np.array(6400.0))) == pytest.approx(15.0 + 27.0)
    hz = np.array([0.0, 300.0, 999.0, 1000.0, 4321.0, 8000.0])
    assert mel_to_hz(hz_to_mel(hz)) == pytest.approx(hz)


def test_filters_are_triangles_of_unit_area_in_rising_order() -> None:
    filters = mel_filterbank()
    assert filters.shape == (40, N_FFT // 2 + 1)
    assert (filters >= 0).all()
    peaks = filters.argmax(axis=1)
    assert (np.diff(peaks) >= 0).all()
    bin_hz = 16_000 / N_FFT
    # Wide filters (above ~1 kHz) integrate to 1 Hz^-1 * Hz: Slaney's area normalisation.
    assert filters[15:].sum(axis=1) * bin_hz == pytest.approx(np.ones(25), rel=0.03)


def test_frames_every_10_ms_without_centre_padding() -> None:
    assert log_mel(np.zeros(511, dtype=np.float32)).shape == (0, 40)
    assert log_mel(np.zeros(512, dtype=np.float32)).shape == (1, 40)
    assert log_mel(np.zeros(16_000, dtype=np.float32)).shape == (1 + (16_000 - 512) // 160, 40)


def test_a_tone_lights_the_band_that_holds_its_frequency() -> None:
    t = np.arange(16_000) / 16_000
    features = log_mel((0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32))
    band = int(features.mean(axis=0).argmax())
    centres = mel_to_hz(np.linspace(0, float(hz_to_mel(np.array(8000.0))), 42))[1:-1]
    assert abs(centres[band] - 1000) < 120
    silence = log_mel(np.zeros(16_000, dtype=np.float32))
    assert silence.max() == pytest.approx(-10.0)  # log10 of the 1e-10 floor


def test_blocks_give_the_whole_spectrum_at_once_in_bounded_memory() -> None:
    rng = np.random.default_rng(3)
    samples = (0.1 * rng.standard_normal(SAMPLE_RATE * 600)).astype(np.float32)  # 10 min
    tracemalloc.start()
    features = log_mel(samples)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # At once: 60 000 frames x 257 complex128 (247 MB) and its temporaries, ~0.9 GB.
    assert peak < 48 << 20, f"peak {peak / 2**20:.0f} MiB"
    head = samples[: SAMPLE_RATE * 130]
    frames = np.lib.stride_tricks.sliding_window_view(head, 512)[::160]
    spectrum = np.fft.rfft(frames * _WINDOW, axis=1)
    power = (spectrum.real**2 + spectrum.imag**2).astype(np.float32)
    whole = np.log10(power @ _FILTERS.T + 1e-10)
    assert features.shape == ((samples.shape[0] - 512) // 160 + 1, 40)
    np.testing.assert_allclose(features[: whole.shape[0]], whole, rtol=0, atol=1e-5)
