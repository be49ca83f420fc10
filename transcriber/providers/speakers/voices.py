"""The voices a record keeps: the windows embedded to find its speakers, as `VoiceWindows`.

A mono record's come with its turns (`turns.FoundTurns`: the sparse pass and the refined
windows, no input embedded twice). A stereo call is never clustered, so its
voices are embedded here on purpose: each utterance's speech on the utterance's
own channel, cut into the same windows as a mono recording's, every fourth of
them embedded (as the sparse pass), at most `MAX_CHANNEL_WINDOWS` a channel
chosen evenly over the call: a 30-minute call costs about 280 inputs a
channel, ~3 s of one slow core.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from transcriber.domain.voices import MAX_KEPT_WINDOWS, VoiceWindows
from transcriber.ports import Span, Utterance
from transcriber.providers.speakers.refine import Embeds, sparse_positions
from transcriber.providers.speakers.stream import pcm_blocks, speech_and_features
from transcriber.providers.speakers.turns import FoundTurns, WindowPlan, plan_windows

MAX_CHANNEL_WINDOWS: Final = MAX_KEPT_WINDOWS // 2
PLAN: Final = WindowPlan()


def found_voices(found: FoundTurns, *, channel: int = 0) -> VoiceWindows:
    """The windows a separation embedded, bounded (`VoiceWindows.bounded`)."""
    return VoiceWindows.of([(w.start_ms, w.end_ms, channel) for w in found.windows],
                           found.vectors).bounded()


def joined_spans(utterances: Sequence[Utterance]) -> list[Span]:
    """Pure: the utterances' times as speech regions, overlapping ones joined."""
    spans: list[Span] = []
    for u in sorted(utterances, key=lambda u: u.start_ms):
        if spans and u.start_ms <= spans[-1].end_ms:
            spans[-1] = Span(start_ms=spans[-1].start_ms, end_ms=max(spans[-1].end_ms, u.end_ms))
        elif u.end_ms > u.start_ms:
            spans.append(Span(start_ms=u.start_ms, end_ms=u.end_ms))
    return spans


def channel_windows(utterances: Sequence[Utterance], *, limit: int = MAX_CHANNEL_WINDOWS,
                    plan: WindowPlan = PLAN) -> list[Span]:
    """Pure: the windows of one channel's utterances to embed: every `plan.every`-th of
    each region's (and its last), at most `limit`, chosen evenly."""
    windows: list[Span] = []
    for region in joined_spans(utterances):
        group = plan_windows([region], plan)
        windows += [group[p] for p in sparse_positions(len(group), plan.every)]
    if len(windows) > limit:
        keep = np.unique(np.linspace(0, len(windows) - 1, limit).round().astype(np.int64))
        windows = [windows[int(i)] for i in keep]
    return windows


def stereo_voices(audio: Path, utterances: Sequence[Utterance],
                  embedder: Embeds) -> VoiceWindows:
    """Each channel's windows embedded on that channel alone of the stereo `audio`."""
    rows: list[tuple[int, int, int]] = []
    vectors = []
    for channel in (0, 1):
        windows = channel_windows([u for u in utterances if u.channel == channel])
        if not windows:
            continue
        _, features = speech_and_features(pcm_blocks(audio, channel=channel), None)
        vectors.append(embedder.embed(features, windows))
        rows += [(w.start_ms, w.end_ms, channel) for w in windows]
    if not rows:
        return VoiceWindows.of([], np.zeros((0, 256), np.float32))
    return VoiceWindows.of(rows, np.concatenate(vectors))
