"""Voice prints: a speaker's embeddings summed up, compared and matched (pure numpy).

The domain's: the speaker engine makes the windows' embeddings, the pipeline sums
them up per speaker, the writer merges named speakers into the owner's voice
profiles and matches a new record's speakers against them; all of them use
these functions and byte formats. The embeddings are biometric data: they are
kept only in the database (docs/speakers.md, "Known voices"), never logged.

A print is a centroid (the L2-normalised mean direction of the speaker's
window embeddings) and a few exemplars (the mean directions of consecutive
stretches of the speaker's windows in time order, so a voice heard in two
moods, or near and far from the microphone, keeps both), with the talk time
it stands for. Bytes: little-endian float32, 256 values a vector.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]

DIM: Final = 256
# A record speaker's print keeps this many exemplars; a profile this many.
RECORD_EXEMPLARS: Final = 4
PROFILE_EXEMPLARS: Final = 8
# A record keeps at most this many embedded windows (chosen evenly over the recording)
# for the summaries to be computed again when lines move between speakers: 1200 windows
# of float16 are 600 KB; a recording's sparse pass embeds about one window every 3.2 s
# of speech, so an hour is kept whole.
MAX_KEPT_WINDOWS: Final = 1200
# Only a speaker with at least this much talk time (and one embedded window) gets a
# print: a few words are too little to recognize a voice by (see the calibration bench).
MIN_PRINT_MS: Final = 2000
# A profile remembers this many namings (the latest); older ones are forgotten, so its
# size is bounded (100 x 5 vectors of 1 KB) and it follows how the voice sounds now.
MAX_SOURCES: Final = 100


def normalised(vector: npt.NDArray[np.floating]) -> Floats:
    norm = float(np.linalg.norm(vector))
    return (vector / (norm + 1e-12)).astype(np.float32)


@dataclass(frozen=True, slots=True, kw_only=True)
class VoicePrint:
    """One voice summed up: a unit centroid, unit exemplars (rows), the talk time."""

    centroid: Floats
    exemplars: Floats
    talk_ms: int

    def centroid_bytes(self) -> bytes:
        return self.centroid.astype("<f4").tobytes()

    def exemplar_bytes(self) -> bytes:
        return self.exemplars.astype("<f4").tobytes()

    @classmethod
    def from_bytes(cls, centroid: bytes, exemplars: bytes, talk_ms: int) -> VoicePrint:
        c = np.frombuffer(centroid, dtype="<f4").astype(np.float32)
        e = np.frombuffer(exemplars, dtype="<f4").astype(np.float32).reshape(-1, c.shape[0])
        return cls(centroid=c, exemplars=e, talk_ms=int(talk_ms))


def summarize(vectors: Floats, *, talk_ms: int, exemplars: int = RECORD_EXEMPLARS) -> VoicePrint:
    """Pure: the print of one speaker's window embeddings (rows, in time order)."""
    if vectors.shape[0] == 0:
        raise ValueError("a print needs at least one embedding")
    centroid = normalised(vectors.astype(np.float64).sum(axis=0))
    chunks = np.array_split(vectors.astype(np.float64), min(exemplars, vectors.shape[0]))
    rows = np.stack([normalised(chunk.sum(axis=0)) for chunk in chunks])
    return VoicePrint(centroid=centroid, exemplars=rows, talk_ms=talk_ms)


def merge(prints: Sequence[VoicePrint], *, exemplars: int = PROFILE_EXEMPLARS) -> VoicePrint:
    """Pure: a profile from the prints of the speakers named alike, weighted by talk time.

    The centroid is the talk-weighted mean direction; the exemplars are chosen from
    all the prints' exemplars farthest-first (the first the nearest the centroid), so
    they spread over the ways the voice was heard."""
    if not prints:
        raise ValueError("a profile needs at least one print")
    weights = np.array([max(p.talk_ms, 1) for p in prints], dtype=np.float64)
    centroid = normalised(np.sum([w * p.centroid for w, p in zip(weights, prints,
                                                                  strict=True)], axis=0))
    pool = np.concatenate([p.exemplars for p in prints]).astype(np.float32)
    chosen = [int(np.argmax(pool @ centroid))]
    while len(chosen) < min(exemplars, pool.shape[0]):
        nearest = np.max(pool @ pool[chosen].T, axis=1)
        nearest[chosen] = np.inf
        chosen.append(int(np.argmin(nearest)))
    return VoicePrint(centroid=centroid, exemplars=pool[chosen],
                      talk_ms=int(sum(p.talk_ms for p in prints)))


def similarity(speaker: VoicePrint, profile: VoicePrint) -> float:
    """Pure: how alike a record's speaker and a profile sound, a cosine in [-1, 1]: the
    mean of the speaker's centroid against the profile's centroid and against the
    profile's nearest exemplar (a voice the profile heard in one setting only is still
    matched by that setting; the centroid alone keeps a lone odd exemplar from
    deciding). The calibration bench chose this and the threshold."""
    to_centroid = float(speaker.centroid @ profile.centroid)
    to_exemplar = float(np.max(profile.exemplars @ speaker.centroid)) \
        if profile.exemplars.shape[0] else to_centroid
    return (to_centroid + to_exemplar) / 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    speaker: str
    profile_id: str
    similarity: float


def assign(scores: Mapping[tuple[str, str], float], *, threshold: float,
           refused: Collection[tuple[str, str]] = (),
           taken: Collection[str] = ()) -> list[Match]:
    """Pure: one profile at most per speaker and one speaker at most per profile, greedy by
    similarity (the best pair first, then the best of the rest): (speaker, profile) ->
    similarity. Pairs below `threshold`, `refused` pairs and `taken` profiles (already a
    name on the record) are never matched; speakers beyond the profiles stay unmatched.
    Ties break by speaker then profile id, so the answer does not depend on order."""
    pairs = sorted(((s, p, v) for (s, p), v in scores.items()
                    if v >= threshold and (s, p) not in refused and p not in taken),
                   key=lambda item: (-item[2], item[0], item[1]))
    used_speakers: set[str] = set()
    used_profiles: set[str] = set(taken)
    matches = []
    for speaker, profile, value in pairs:
        if speaker in used_speakers or profile in used_profiles:
            continue
        used_speakers.add(speaker)
        used_profiles.add(profile)
        matches.append(Match(speaker=speaker, profile_id=profile, similarity=value))
    return sorted(matches, key=lambda m: m.speaker)


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceWindows:
    """A record's embedded windows: times, the channel heard (0 for mono) and a unit
    embedding each (rows). What the summaries are computed from again when a person
    moves lines between speakers."""

    starts_ms: npt.NDArray[np.int32]
    ends_ms: npt.NDArray[np.int32]
    channels: npt.NDArray[np.int8]
    vectors: Floats

    def __len__(self) -> int:
        return int(self.starts_ms.shape[0])

    @classmethod
    def of(cls, windows: Sequence[tuple[int, int, int]], vectors: Floats) -> VoiceWindows:
        """From (start_ms, end_ms, channel) triples and their embeddings (rows)."""
        times = np.asarray(windows, dtype=np.int64).reshape(-1, 3)
        return cls(starts_ms=times[:, 0].astype(np.int32), ends_ms=times[:, 1].astype(np.int32),
                   channels=times[:, 2].astype(np.int8),
                   vectors=np.asarray(vectors, dtype=np.float32).reshape(-1, DIM))

    def bounded(self, limit: int = MAX_KEPT_WINDOWS) -> VoiceWindows:
        """At most `limit` windows, chosen evenly over the recording."""
        if len(self) <= limit:
            return self
        order = np.argsort(self.starts_ms, kind="stable")
        keep = order[np.unique(np.linspace(0, len(self) - 1, limit).round().astype(np.int64))]
        return VoiceWindows(starts_ms=self.starts_ms[keep], ends_ms=self.ends_ms[keep],
                            channels=self.channels[keep], vectors=self.vectors[keep])

    def to_bytes(self) -> bytes:
        """count (uint32), then starts, ends (int32), channels (int8), vectors (float16)."""
        return b"".join([np.uint32(len(self)).astype("<u4").tobytes(),
                         self.starts_ms.astype("<i4").tobytes(),
                         self.ends_ms.astype("<i4").tobytes(),
                         self.channels.astype("i1").tobytes(),
                         self.vectors.astype("<f2").tobytes()])

    @classmethod
    def from_bytes(cls, blob: bytes) -> VoiceWindows:
        count = int(np.frombuffer(blob[:4], dtype="<u4")[0])
        at = 4
        starts = np.frombuffer(blob[at:at + 4 * count], dtype="<i4")
        at += 4 * count
        ends = np.frombuffer(blob[at:at + 4 * count], dtype="<i4")
        at += 4 * count
        channels = np.frombuffer(blob[at:at + count], dtype="i1")
        at += count
        vectors = np.frombuffer(blob[at:], dtype="<f2").astype(np.float32).reshape(count, DIM)
        return cls(starts_ms=starts.astype(np.int32), ends_ms=ends.astype(np.int32),
                   channels=channels.astype(np.int8), vectors=vectors)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpokenLine:
    """Who said a line and when: an utterance as the summaries need it."""

    speaker: str
    channel: int
    start_ms: int
    end_ms: int


def speaker_prints(windows: VoiceWindows, lines: Sequence[SpokenLine], *,
                   min_ms: int = MIN_PRINT_MS) -> dict[str, VoicePrint]:
    """Pure: each speaker's print from the windows whose centre lies in one of its lines
    (on the line's channel); talk time is the sum of its lines. A speaker with less
    than `min_ms` of talk, or no window inside its lines, gets none. A window centred
    in the lines of two speakers (overlapping speech) counts for neither."""
    talk: dict[str, int] = {}
    for line in lines:
        talk[line.speaker] = talk.get(line.speaker, 0) + max(0, line.end_ms - line.start_ms)
    if len(windows) == 0:
        return {}
    centres = (windows.starts_ms.astype(np.int64) + windows.ends_ms) // 2
    owner = np.full(len(windows), -1, dtype=np.int64)
    labels = sorted(talk)
    for line in lines:
        inside = ((centres >= line.start_ms) & (centres <= line.end_ms)
                  & (windows.channels == line.channel))
        code = labels.index(line.speaker)
        clash = inside & (owner >= 0) & (owner != code)
        owner[inside & (owner < 0)] = code
        owner[clash] = -2
    prints = {}
    for code, label in enumerate(labels):
        picked = np.flatnonzero(owner == code)
        if picked.size == 0 or talk[label] < min_ms:
            continue
        picked = picked[np.argsort(windows.starts_ms[picked], kind="stable")]
        prints[label] = summarize(windows.vectors[picked], talk_ms=talk[label])
    return prints
