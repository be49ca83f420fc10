"""Intake: a stream of bytes becomes a record at the first stage.

Shared by both doors (the web upload and the Telegram bot). The stream goes
straight into the record-file store (`RecordFiles.place_stream`: a temporary
name renamed when complete, or a multipart upload completed at the end;
never held in memory), it is probed (only
audio containers are opened; the container decides the stored extension),
audio that is too long or sampled too slowly is refused (`audio_refusal`),
and the `files` and record rows are written in one writer transaction
(`AcceptRecord`). On any failure nothing stays behind: no row, no file, no
temporary file.

Once the file is in place, probing and registering run in a task of their
own, shielded from the caller's cancellation: a client that disconnects
while its record is being written cannot leave a row without a file or a
file without a row; the task finishes or cleans up by itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass
from typing import Literal

import structlog

from transcriber.core.errors import PermanentFailure, TranscriberError
from transcriber.core.ids import new_id
from transcriber.core.paths import clean_original_name
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import Accepted, AcceptRecord, Source, Via
from transcriber.db.writer import Writer
from transcriber.ports import AudioProbe, RecordFiles, Transcoder
from transcriber.ports.files import PlacedFile
from transcriber.settings import ServerSettings

log = structlog.get_logger(__name__)

# Registration tasks outliving a cancelled caller are kept alive here.
_IN_FLIGHT: set[asyncio.Task[Accepted]] = set()


# Below this the audio cannot carry speech a recognizer understands (the telephone band).
MIN_SAMPLE_RATE = 8000

Refusal = Literal["too_long", "sample_rate_too_low", "sample_rate_too_high",
                  "too_many_channels"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioLimits:
    """What intake takes (docs/hostile-input.md, "Hostile media" and "Audio budgets,
    backups and local files")."""

    max_seconds: int
    max_sample_rate: int = 192000
    max_channels: int = 8
    # The owner's queued audio (not done, not halted) plus this record; 0: no quota.
    queued_max_seconds: int = 0

    @classmethod
    def of(cls, server: ServerSettings) -> AudioLimits:
        return cls(max_seconds=server.record_max_seconds,
                   max_sample_rate=server.max_sample_rate, max_channels=server.max_channels,
                   queued_max_seconds=server.queued_audio_max_seconds_per_user)


class EmptyInput(TranscriberError):
    """The stream carried no bytes at all."""


class AudioRefused(PermanentFailure):
    """Readable audio the service does not take: too long, sampled too slowly or too
    fast, or with too many channels."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(_REASONS[refusal])
        self.refusal: Refusal = refusal


_REASONS: dict[Refusal, str] = {
    "too_long": "longer than the longest accepted recording",
    "sample_rate_too_low": f"sampled below {MIN_SAMPLE_RATE} Hz",
    "sample_rate_too_high": "sampled faster than the fastest accepted rate",
    "too_many_channels": "more channels than accepted",
}


def audio_refusal(probe: AudioProbe, limits: AudioLimits) -> Refusal | None:
    """Pure: why this audio is refused at intake, or None.

    The rate and channel bounds are what a header can make the normalizer pay:
    decoding work grows with rate × channels (30 s at 1 MHz × 8 channels in a
    16.7 KB FLAC took 4.9 s to convert), whatever the file's size."""
    if probe.sample_rate < MIN_SAMPLE_RATE:
        return "sample_rate_too_low"
    if probe.sample_rate > limits.max_sample_rate:
        return "sample_rate_too_high"
    if probe.channels > limits.max_channels:
        return "too_many_channels"
    if probe.duration_ms > limits.max_seconds * 1000:
        return "too_long"
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Intake:
    """Where the stream comes from and whose record it becomes."""

    owner_id: str
    original_name: str | None
    source: Source = "http"
    title: str = ""
    tg_chat_id: int | None = None
    tg_message_id: int | None = None
    language: str = "auto"
    speakers: int | None = None
    """How many speakers the uploader says there are (1-8); None: found by listening."""
    via: Via | None = None
    """How an `http` record came in (the web app, a token's client, the local command,
    the watched folder); the card's "From"."""
    watched_sha256: str | None = None
    """A watched folder's file: its hash, remembered in the record's transaction."""
    upload_id: str | None = None
    """A resumable upload's id: its row names the record in the record's transaction, so
    a server stopped right after cannot make a second record of it."""
    space_id: str | None = None
    """The space the record goes into, in the record's transaction; the door has
    checked that the owner may add records there."""


async def accept_stream(
    intake: Intake,
    chunks: AsyncIterable[bytes],
    *,
    files: RecordFiles,
    writer: Writer,
    transcoder: Transcoder,
    limit: int,
    limits: AudioLimits,
    expected_size: int | None = None,
    late: Callable[[Intake], Intake] | None = None,
) -> Accepted:
    """Store the stream as a new record.

    `late`, when given, is applied to `intake` once the stream has ended: a form
    may send fields after its file (OpenAI's clients' `language`), and the
    chunks' iterator reads them before it ends.

    Raises `TooLarge`, `IncompleteInput`, `EmptyInput`, `AudioRefused`,
    `QuotaExceeded`, the transcoder's `PermanentFailure` (not audio) or
    `TransientFailure`, or the writer's errors; in every case after removing
    what was stored.
    """
    record_id = new_id()
    name = clean_original_name(intake.original_name)
    # No extension until the content decides one: the sender's would steer the probe.
    placed = await files.place_stream(
        record_id, chunks, ext="", limit=limit, expected_size=expected_size
    )
    if late is not None:
        try:
            intake = late(intake)
        except BaseException:
            await files.discard(placed)
            await files.release(placed.record_id)
            raise
    task = asyncio.create_task(
        _register(intake, placed, name, files=files, writer=writer, transcoder=transcoder,
                  limits=limits),
        name=f"intake_register:{record_id}",
    )
    _IN_FLIGHT.add(task)
    task.add_done_callback(_IN_FLIGHT.discard)
    return await asyncio.shield(task)


async def _register(
    intake: Intake,
    placed: PlacedFile,
    name: str,
    *,
    files: RecordFiles,
    writer: Writer,
    transcoder: Transcoder,
    limits: AudioLimits,
) -> Accepted:
    keep = False
    try:
        if placed.size_bytes == 0:
            raise EmptyInput("the file is empty")
        probe = await transcoder.probe(placed.path)
        refusal = audio_refusal(probe, limits)
        if refusal is not None:
            raise AudioRefused(refusal)
        placed = await files.retype(placed, probe.extension)
        duration_ms = probe.duration_ms
        accepted = await writer.ask(AcceptRecord(
            record_id=placed.record_id,
            owner_id=intake.owner_id,
            original=StoredFile(id=placed.file_id, file_name=placed.file_name,
                                size_bytes=placed.size_bytes, format=placed.format,
                                duration_ms=duration_ms),
            original_filename=name,
            duration_ms=duration_ms,
            title=intake.title,
            source=intake.source,
            tg_chat_id=intake.tg_chat_id,
            tg_message_id=intake.tg_message_id,
            language=intake.language,
            speakers=intake.speakers,
            queued_max_ms=limits.queued_max_seconds * 1000,
            via=intake.via,
            watched_sha256=intake.watched_sha256,
            upload_id=intake.upload_id,
            space_id=intake.space_id,
        ))
        # A repeated Telegram message (or a resumable upload finished already) answers
        # with the record stored before; the copy just received is not needed.
        keep = accepted.created
        if keep:
            log.info("record_accepted", record_id=accepted.record_id, source=intake.source,
                     size_bytes=placed.size_bytes, duration_ms=duration_ms)
        return accepted
    except BaseException as exc:
        log.info("intake_refused", record_id=placed.record_id, error=type(exc).__name__)
        raise
    finally:
        if not keep:
            await files.discard(placed)
        # The probe's local copy (s3): a step fetches what it needs on its own host.
        await files.release(placed.record_id)
