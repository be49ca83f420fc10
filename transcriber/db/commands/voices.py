"""Known voices in the writer: a record's prints saved, names learned, suggestions chosen.

The functions run inside the writer's transaction of the command that calls them
(the poll step's advance, a person's edit or correction), so a profile never
disagrees with the names and lines it was learned from. The commands are a
person's own acts on a suggestion or a profile. The vectors are read and written
here and in `transcriber.domain.voices` only; nothing here logs them.

A profile is recomputed from its sources (each naming of a record speaker with
that speaker's print at the time): `voices.merge`, weighted by talk time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
import structlog

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.core.observability import VOICE_SUGGESTIONS
from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.voices import (
    MAX_SOURCES,
    SpokenLine,
    VoicePrint,
    VoiceWindows,
    assign,
    merge,
    similarity,
    speaker_prints,
)

q_v = q.voices
log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceRules:
    """What the settings say: the feature is on (`recognizer.voice_profiles`; `None`
    in place of the rules when off) and the threshold of a suggestion."""

    threshold: float


async def _rows(ctx: WriteContext, sql: str, params: Mapping[str, Any]) -> list[Any]:
    async with ctx.conn.execute(sql, params) as cursor:
        return list(await cursor.fetchall())


def _print(row: Any) -> VoicePrint:
    return VoicePrint.from_bytes(row["centroid"], row["exemplars"], row["talk_ms"])


def _names(stored: str | None) -> dict[str, str]:
    names = orjson.loads(stored or "{}")
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


# --- a record's voices -------------------------------------------------------------------

async def save_record_voices(ctx: WriteContext, *, record_id: str, windows: VoiceWindows,
                             prints: Mapping[str, VoicePrint], rules: VoiceRules) -> None:
    """A record's new speakers (its transcript was just saved): their prints, the
    windows they came from, and the suggestions from the owner's profiles."""
    params = {"record_id": record_id}
    await ctx.conn.execute(q_v.DELETE_RECORD_VOICES, params)
    await ctx.conn.execute(q_v.UPSERT_RECORD_WINDOWS, {**params, "windows": windows.to_bytes()})
    for speaker, found in prints.items():
        await ctx.conn.execute(q_v.UPSERT_RECORD_VOICE, {
            **params, "speaker": speaker, "talk_ms": found.talk_ms,
            "centroid": found.centroid_bytes(), "exemplars": found.exemplar_bytes()})
    await suggest(ctx, record_id=record_id, rules=rules)


async def forget_record_voices(ctx: WriteContext, *, record_id: str) -> None:
    """The record's speakers' prints and windows go (a new transcript is coming)."""
    await ctx.conn.execute(q_v.DELETE_RECORD_VOICES, {"record_id": record_id})
    await ctx.conn.execute(q_v.DELETE_RECORD_WINDOWS, {"record_id": record_id})


async def suggest(ctx: WriteContext, *, record_id: str, rules: VoiceRules) -> None:
    """Choose the record's suggestions again: each unnamed speaker against the owner's
    profiles, one profile a speaker and a speaker a profile (`voices.assign`),
    never a profile whose name the record already gives or that one of its speakers
    taught, nor one refused for it."""
    async with ctx.conn.execute(q_v.RECORD_OWNER, {"record_id": record_id}) as cursor:
        record = await cursor.fetchone()
    await ctx.conn.execute(q_v.CLEAR_SUGGESTIONS, {"record_id": record_id})
    if record is None:
        return
    names = {name.strip() for name in _names(record["speaker_names"]).values() if name.strip()}
    named = set(_names(record["speaker_names"]))
    voices = [v for v in await _rows(ctx, q_v.RECORD_VOICES, {"record_id": record_id})
              if v["speaker"] not in named]
    if not voices:
        return
    profiles = await _rows(ctx, q_v.OWNER_PROFILE_PRINTS, {"owner_id": record["owner_id"]})
    # Taken: a profile the record names, and one a speaker of the record already taught
    # (renamed or merged since, its name may no longer be among the record's names).
    sources = {row["profile_id"]
               for row in await _rows(ctx, q_v.RECORD_SOURCES, {"record_id": record_id})}
    taken = {p["id"] for p in profiles if p["name"] in names or p["id"] in sources}
    prints = {p["id"]: _print(p) for p in profiles if p["id"] not in taken}
    scores = {(v["speaker"], pid): similarity(_print(v), found)
              for v in voices for pid, found in prints.items()}
    refused = {(v["speaker"], str(pid)) for v in voices for pid in orjson.loads(v["rejected"])}
    matches = assign(scores, threshold=rules.threshold, refused=refused, taken=taken)
    if len({m.profile_id for m in matches}) != len(matches) or any(
            (m.speaker, m.profile_id) in refused or m.profile_id in taken for m in matches):
        # One profile for two speakers of a record, or a refused pair: never written.
        VOICE_SUGGESTIONS.labels(outcome="refused_invariant").inc()
        log.error("voice_suggestions_invariant", record_id=record_id)
        return
    VOICE_SUGGESTIONS.labels(outcome="made").inc(len(matches))
    for match in matches:
        await ctx.conn.execute(q_v.SET_SUGGESTION, {
            "record_id": record_id, "speaker": match.speaker, "profile_id": match.profile_id,
            "similarity": round(match.similarity, 4)})


# --- profiles learned from names ------------------------------------------------------------

async def recompute_profile(ctx: WriteContext, profile_id: str) -> None:
    """The profile from its latest `MAX_SOURCES` sources; gone when it has none left."""
    await ctx.conn.execute(q_v.PRUNE_SOURCES, {"profile_id": profile_id, "keep": MAX_SOURCES})
    sources = await _rows(ctx, q_v.PROFILE_SOURCES, {"profile_id": profile_id})
    if not sources:
        await ctx.conn.execute(q_v.DELETE_PROFILE_BY_ID, {"id": profile_id})
        return
    found = merge([_print(s) for s in sources])
    await ctx.conn.execute(q_v.UPDATE_PROFILE_PRINT, {
        "id": profile_id, "centroid": found.centroid_bytes(), "exemplars": found.exemplar_bytes(),
        "talk_ms": found.talk_ms, "records": len({s["record_id"] for s in sources}),
        "now": ctx.now()})


async def learn_names(ctx: WriteContext, *, record_id: str, owner_id: str,
                      names: Mapping[str, str | None], rules: VoiceRules) -> None:
    """Names given to (or taken from) a record's speakers teach the owner's profiles:
    a speaker named X is a source of the profile X (created on first use) and of no
    other; a name taken away takes its source away. Then the record's suggestions are
    chosen again (a name given is a profile taken)."""
    sources = await _rows(ctx, q_v.RECORD_SOURCES, {"record_id": record_id})
    voices = {v["speaker"]: v for v in await _rows(ctx, q_v.RECORD_VOICES,
                                                   {"record_id": record_id})}
    touched: set[str] = set()
    now = ctx.now()
    for speaker, raw in names.items():
        name = (raw or "").strip()
        for source in sources:
            if source["speaker"] == speaker and source["name"] != name:
                await ctx.conn.execute(q_v.DELETE_SOURCE, {
                    "profile_id": source["profile_id"], "record_id": record_id,
                    "speaker": speaker})
                touched.add(source["profile_id"])
        voice = voices.get(speaker)
        if not name or voice is None:
            continue
        async with ctx.conn.execute(q_v.UPSERT_PROFILE, {
                "id": new_id(), "owner_id": owner_id, "name": name, "now": now,
                "centroid": voice["centroid"], "exemplars": voice["exemplars"]}) as cursor:
            row = await cursor.fetchone()
        assert row is not None, "an upsert with RETURNING answers a row"
        await ctx.conn.execute(q_v.UPSERT_SOURCE, {
            "profile_id": row["id"], "record_id": record_id, "speaker": speaker,
            "talk_ms": voice["talk_ms"], "centroid": voice["centroid"],
            "exemplars": voice["exemplars"], "now": now})
        touched.add(row["id"])
    for profile_id in sorted(touched):
        await recompute_profile(ctx, profile_id)
    await suggest(ctx, record_id=record_id, rules=rules)


async def relearn_lines(ctx: WriteContext, *, record_id: str, lines: Sequence[SpokenLine],
                        rules: VoiceRules) -> None:
    """Lines moved between a record's speakers: each speaker's print is computed again
    from the kept windows inside the lines it has now; the profiles it is a source of
    follow (a speaker left without a print leaves them)."""
    async with ctx.conn.execute(q_v.RECORD_WINDOWS, {"record_id": record_id}) as cursor:
        row = await cursor.fetchone()
    if row is None:
        return
    prints = speaker_prints(VoiceWindows.from_bytes(row["windows"]), lines)
    params = {"record_id": record_id}
    for voice in await _rows(ctx, q_v.RECORD_VOICES, params):
        if voice["speaker"] not in prints:
            await ctx.conn.execute(q_v.DELETE_RECORD_VOICE, {**params,
                                                             "speaker": voice["speaker"]})
    for speaker, found in prints.items():
        await ctx.conn.execute(q_v.UPSERT_RECORD_VOICE, {
            **params, "speaker": speaker, "talk_ms": found.talk_ms,
            "centroid": found.centroid_bytes(), "exemplars": found.exemplar_bytes()})
    touched: set[str] = set()
    now = ctx.now()
    for source in await _rows(ctx, q_v.RECORD_SOURCES, params):
        now_print = prints.get(source["speaker"])
        key = {"profile_id": source["profile_id"], "record_id": record_id,
               "speaker": source["speaker"]}
        if now_print is None:
            await ctx.conn.execute(q_v.DELETE_SOURCE, key)
        else:
            await ctx.conn.execute(q_v.UPSERT_SOURCE, {
                **key, "talk_ms": now_print.talk_ms, "centroid": now_print.centroid_bytes(),
                "exemplars": now_print.exemplar_bytes(), "now": now})
        touched.add(source["profile_id"])
    for profile_id in sorted(touched):
        await recompute_profile(ctx, profile_id)
    await suggest(ctx, record_id=record_id, rules=rules)


# --- a person's acts -------------------------------------------------------------------------

async def _owned_voice(ctx: WriteContext, *, record_id: str, owner_id: str,
                       speaker: str) -> tuple[Any, Any]:
    async with ctx.conn.execute(q_v.RECORD_NAMES, {"record_id": record_id,
                                                   "owner_id": owner_id}) as cursor:
        record = await cursor.fetchone()
    if record is None:
        raise NotFound(f"record {record_id} not found")
    async with ctx.conn.execute(q_v.RECORD_VOICE, {"record_id": record_id,
                                                   "speaker": speaker}) as cursor:
        voice = await cursor.fetchone()
    if voice is None or voice["profile_id"] is None:
        raise Conflict(f"{speaker} has no suggestion")
    return record, voice


async def _suggested_voice(ctx: WriteContext, *, record_id: str, owner_id: str, speaker: str,
                           expected: str | None) -> Any:
    """The owner's record's speaker whose suggestion a person answers; `Conflict` when
    the suggestion is no longer the one they saw (`expected`)."""
    _, voice = await _owned_voice(ctx, record_id=record_id, owner_id=owner_id, speaker=speaker)
    if expected is not None and voice["profile_id"] != expected:
        raise Conflict("the suggestion changed")
    return voice


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmSuggestion(Command[None]):
    """The suggested name becomes the speaker's name, and the speaker a source of the
    profile. `expected`: the profile the person saw (another now is `Conflict`)."""

    name: ClassVar[str] = "confirm_voice"
    record_id: str
    owner_id: str
    speaker: str
    expected: str | None
    rules: VoiceRules

    async def execute(self, ctx: WriteContext) -> None:
        voice = await _suggested_voice(ctx, record_id=self.record_id, owner_id=self.owner_id,
                                       speaker=self.speaker, expected=self.expected)
        async with ctx.conn.execute(q_v.OWNED_PROFILE, {"id": voice["profile_id"],
                                                        "owner_id": self.owner_id}) as cursor:
            profile = await cursor.fetchone()
        if profile is None:
            raise Conflict(f"{self.speaker} has no suggestion")
        await ctx.conn.execute(q.edits.PATCH_SPEAKER_NAMES, {
            "id": self.record_id, "owner_id": self.owner_id, "now": ctx.now(),
            "patch": orjson.dumps({self.speaker: profile["name"]}).decode()})
        await learn_names(ctx, record_id=self.record_id, owner_id=self.owner_id,
                          names={self.speaker: profile["name"]}, rules=self.rules)


@dataclass(frozen=True, slots=True, kw_only=True)
class RejectSuggestion(Command[None]):
    """The speaker is not the suggested profile's voice: never suggested for it again;
    the record's suggestions are chosen again without that pair."""

    name: ClassVar[str] = "reject_voice"
    record_id: str
    owner_id: str
    speaker: str
    expected: str | None
    rules: VoiceRules

    async def execute(self, ctx: WriteContext) -> None:
        voice = await _suggested_voice(ctx, record_id=self.record_id, owner_id=self.owner_id,
                                       speaker=self.speaker, expected=self.expected)
        rejected = [*orjson.loads(voice["rejected"]), voice["profile_id"]]
        await ctx.conn.execute(q_v.SET_REJECTED, {
            "record_id": self.record_id, "speaker": self.speaker,
            "rejected": orjson.dumps(sorted(set(rejected))).decode()})
        await suggest(ctx, record_id=self.record_id, rules=self.rules)


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameVoice(Command[None]):
    """A profile's new name (`Conflict` when the owner has one of that name: merge
    instead). The names already given on records stay as they are."""

    name: ClassVar[str] = "rename_voice"
    profile_id: str
    owner_id: str
    new_name: str

    async def execute(self, ctx: WriteContext) -> None:
        import sqlite3  # noqa: PLC0415 - only for the error type

        try:
            cursor = await ctx.conn.execute(q_v.RENAME_PROFILE, {
                "id": self.profile_id, "owner_id": self.owner_id, "name": self.new_name,
                "now": ctx.now()})
        except sqlite3.IntegrityError:
            raise Conflict("a voice of that name exists") from None
        if cursor.rowcount != 1:
            raise NotFound(f"voice {self.profile_id} not found")


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeVoices(Command[None]):
    """`profile_id`'s sources join `into`'s, its suggestions become `into`'s (where the
    record has no other speaker suggested `into`), and it goes."""

    name: ClassVar[str] = "merge_voices"
    profile_id: str
    into: str
    owner_id: str

    async def execute(self, ctx: WriteContext) -> None:
        for profile_id in (self.profile_id, self.into):
            async with ctx.conn.execute(q_v.OWNED_PROFILE, {
                    "id": profile_id, "owner_id": self.owner_id}) as cursor:
                if await cursor.fetchone() is None:
                    raise NotFound(f"voice {profile_id} not found")
        if self.profile_id == self.into:
            raise Conflict("a voice cannot be merged into itself")
        ids = {"from_id": self.profile_id, "into_id": self.into}
        await ctx.conn.execute(q_v.MOVE_SOURCES, ids)
        await ctx.conn.execute(q_v.MOVE_SUGGESTIONS, ids)
        await ctx.conn.execute(q_v.DELETE_PROFILE, {"id": self.profile_id,
                                                    "owner_id": self.owner_id})
        await recompute_profile(ctx, self.into)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteVoice(Command[None]):
    """The profile and everything it was made of; suggestions of it go; the names
    confirmed on records stay."""

    name: ClassVar[str] = "delete_voice"
    scrubs: ClassVar[bool] = True
    profile_id: str
    owner_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q_v.DELETE_PROFILE, {"id": self.profile_id,
                                                             "owner_id": self.owner_id})
        if cursor.rowcount != 1:
            raise NotFound(f"voice {self.profile_id} not found")


@dataclass(frozen=True, slots=True, kw_only=True)
class Purged:
    profiles: int
    record_voices: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PurgeVoices(Command[Purged]):
    """Every voice embedding of one owner (`login`), or of everybody (`None`): the
    profiles with their sources and every record's prints and windows. `NotFound`
    for a login nobody has."""

    name: ClassVar[str] = "purge_voices"
    scrubs: ClassVar[bool] = True  # biometric data: out of the WAL too
    login: str | None = None

    async def execute(self, ctx: WriteContext) -> Purged:
        if self.login is None:
            profiles = await ctx.conn.execute(q_v.PURGE_PROFILES, {})
            voices = await ctx.conn.execute(q_v.PURGE_RECORD_VOICES, {})
            await ctx.conn.execute(q_v.PURGE_RECORD_WINDOWS, {})
            return Purged(profiles=profiles.rowcount, record_voices=voices.rowcount)
        async with ctx.conn.execute(q_v.USER_BY_LOGIN, {"login": self.login}) as cursor:
            user = await cursor.fetchone()
        if user is None:
            raise NotFound("no such user")
        owner = {"owner_id": user["id"]}
        voices = await ctx.conn.execute(q_v.PURGE_OWNER_RECORD_VOICES, owner)
        await ctx.conn.execute(q_v.PURGE_OWNER_RECORD_WINDOWS, owner)
        profiles = await ctx.conn.execute(q_v.PURGE_OWNER_PROFILES, owner)
        return Purged(profiles=profiles.rowcount, record_voices=voices.rowcount)
