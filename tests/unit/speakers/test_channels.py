"""Channel detection: one signal twice (at any gain or polarity) against two signals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.voices import RATE, speechlike, two_party_call
from transcriber.providers.speakers.channels import ChannelVerdict, compare_channels


@pytest.mark.parametrize("gain", [1.0, 0.5, -1.0, 0.05])
def test_a_copy_at_any_gain_or_polarity_is_the_same_signal(gain: float) -> None:
    voice = speechlike(1)
    report = compare_channels(voice, np.asarray(voice * gain, dtype=np.float32), RATE)
    assert report.verdict is ChannelVerdict.SAME
    assert report.correlation > 0.99
    assert report.level_spread_db < 1


def test_a_copy_with_faint_independent_noise_stays_the_same_signal() -> None:
    voice = speechlike(3)
    rng = np.random.default_rng(9)
    left = voice + 2e-3 * rng.standard_normal(voice.shape[0], dtype=np.float32)
    right = voice + 2e-3 * rng.standard_normal(voice.shape[0], dtype=np.float32)
    assert compare_channels(left, right, RATE).verdict is ChannelVerdict.SAME


def test_a_call_with_one_speaker_per_channel_is_two_signals() -> None:
    left, right = two_party_call()
    noise = np.random.default_rng(4).normal(0, 3e-4, (2, left.shape[0])).astype(np.float32)
    report = compare_channels(left + noise[0], right + noise[1], RATE)
    assert report.verdict is ChannelVerdict.DIFFERENT
    assert report.correlation < 0.2
    assert report.level_spread_db > 30


def test_crosstalk_fools_the_correlation_but_not_the_level_spread() -> None:
    left, right = two_party_call()
    report = compare_channels(left + 0.1 * right, right + 0.1 * left, RATE)
    assert report.correlation > 0.9
    assert report.level_spread_db > 12
    assert report.verdict is ChannelVerdict.DIFFERENT


def test_two_different_voices_talking_over_each_other_are_two_signals() -> None:
    report = compare_channels(speechlike(1), speechlike(5), RATE)
    assert report.verdict is ChannelVerdict.DIFFERENT
    assert report.correlation < 0.5


def test_a_silent_channel_is_reported_as_such() -> None:
    voice = speechlike(1)
    assert compare_channels(voice, np.zeros_like(voice), RATE).verdict is ChannelVerdict.ONE_SILENT
    assert compare_channels(np.zeros_like(voice), voice, RATE).verdict is ChannelVerdict.ONE_SILENT


def test_silence_on_both_or_no_samples_is_not_two_signals() -> None:
    silent = np.zeros(RATE, dtype=np.float32)
    assert compare_channels(silent, silent, RATE).verdict is ChannelVerdict.SAME
    empty = np.zeros(0, dtype=np.float32)
    assert compare_channels(empty, empty, RATE).verdict is ChannelVerdict.SAME
