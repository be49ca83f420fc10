"""Part bookkeeping: each part's `recognitions` row, its cut, its start and its answer.

What the submit and poll steps both do with a record's parts: rebuild their spans
from the rows (`channel_plans`), check that they cover the record (`check_parts`)
and that a cut part is whole (`check_cut`), register a part's row before the paid
call and start its recognition, once (`submit_part`: the poll step restarts a part
whose operation failed with it), and keep a raw answer as a file of the record
(`save_payload`). The steps import these; neither imports the other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.core.observability import RECOGNITION_UNCOVERED_SECONDS
from transcriber.db import reads
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.progress import MeasureSpeed
from transcriber.db.commands.recognition import (
    MarkPartStarted,
    PayloadAlreadySaved,
    Recognition,
    RegisterRecognition,
    SavePayload,
    SetExternalId,
)
from transcriber.pipeline.parts import PartPlan, plans_from_offsets, uncovered_by_parts
from transcriber.pipeline.step import Job
from transcriber.ports import AudioPart, ObjectStore, PartCutter, Recognizer, Runs, SpeechSink

log = structlog.get_logger(__name__)

# A part cut by stream copy starts and ends on an Opus packet (20 ms) and an OGG page:
# it may differ from its plan by a fraction of a second, never by more than this.
CUT_SHORT_TOLERANCE_MS = 1000

def object_key(prefix: str, record_id: str, part_index: int) -> str:
    """Where a record's part lives in the bucket: ids only, never a sender's name."""
    return f"{prefix}{record_id}/part-{part_index:03d}.ogg"



def channel_plans(rows: Sequence[Recognition], *, duration_ms: int,
                  overlap_ms: int) -> list[tuple[PartPlan, int | None]]:
    """Pure: each part's span and channel, in `part_index` order. A stereo record's
    channels are cut alike; each channel's spans are rebuilt from its own rows."""
    by_channel: dict[int | None, list[Recognition]] = {}
    for row in rows:
        by_channel.setdefault(row.channel, []).append(row)
    plans = [
        (plan, channel)
        for channel, group in by_channel.items()
        for plan in plans_from_offsets([(r.part_index, r.offset_ms) for r in group],
                                       duration_ms=duration_ms, overlap_ms=overlap_ms)
    ]
    return sorted(plans, key=lambda item: item[0].index)


def check_parts(plans: Sequence[PartPlan], duration_ms: int, *, job: Job,
                provider: str) -> None:
    """Every second of the record lies in some part (the part planning's promise): a
    plan that leaves a gap is a fault no retry mends, so the record halts, loudly,
    instead of being transcribed short."""
    gaps = uncovered_by_parts(plans, duration_ms)
    if not gaps:
        return
    seconds = sum(b - a for a, b in gaps) / 1000
    RECOGNITION_UNCOVERED_SECONDS.labels(provider, "parts").inc(seconds)
    log.error("parts_uncovered", record_id=job.record_id, gaps=len(gaps),
              seconds=round(seconds, 1))
    raise PermanentFailure(f"the record's parts leave {seconds:.1f} s of audio out")


def check_cut(measured_ms: int, plan: PartPlan, *, job: Job, provider: str) -> None:
    """The part written holds the span planned for it (a cut that came out short would
    lose its tail unheard): retried, counted and logged."""
    short_ms = plan.length_ms - measured_ms
    if short_ms <= CUT_SHORT_TOLERANCE_MS:
        return
    RECOGNITION_UNCOVERED_SECONDS.labels(provider, "cut").inc(short_ms / 1000)
    log.error("part_cut_short", record_id=job.record_id, part=plan.index,
              planned_ms=plan.length_ms, measured_ms=measured_ms)
    raise TransientFailure(f"part {plan.index} was cut {short_ms / 1000:.1f} s short")



def register(job: Job, plan: PartPlan, recognizer: Recognizer,
             uri: str | None = None, channel: int | None = None) -> RegisterRecognition:
    return RegisterRecognition(
        record_id=job.record_id, token=job.token, part_index=plan.index,
        offset_ms=plan.offset_ms, provider=recognizer.provider, model=recognizer.model,
        source_uri=uri, channel=channel,
    )


async def submit_part(
    job: Job,
    plan: PartPlan,
    *,
    recognizer: Recognizer,
    store: ObjectStore | None,
    cutter: PartCutter,
    normalized: str,
    whole: bool,
    again: bool = False,
    language: str | None = None,
    words: bool = False,
    channel: int | None = None,
    on_speech: SpeechSink | None = None,
    model: str | None = None,
) -> Recognition:
    """Register, make readable, start; `again` restarts a part whose operation failed.
    With `channel`, the recognizer hears that channel of a stereo copy alone."""
    key = object_key(job.settings.s3.prefix, job.record_id, plan.index)
    capabilities = recognizer.capabilities
    uri = store.uri(key) if store is not None and capabilities.needs_object_store else None
    row = await job.writer.ask(register(job, plan, recognizer, uri, channel))
    if not again and (row.external_id is not None or row.payload_file is not None):
        log.info("submit_skipped", record_id=job.record_id, part=plan.index,
                 reason="already_submitted")
        return row
    source = await job.files.local_path(job.record_id, normalized)
    # The owner's names and terms, read at each part (an edit reaches the next one).
    terms = await reads.vocabulary.for_record(job.readers, record_id=job.record_id)
    part_file = None
    try:
        if not whole or channel is not None:
            _, part_file = job.files.temp_path(job.record_id,
                                               ".ogg" if channel is None else ".wav")
        audio_path = part_file or source
        if store is not None and uri is not None:
            if not await store.exists(key):
                if part_file is not None:
                    check_cut(await cutter.cut(source, part_file, start_ms=plan.offset_ms,
                                               length_ms=plan.length_ms),
                              plan, job=job, provider=recognizer.provider)
                await store.upload(key, audio_path)
            audio = AudioPart(path=None, uri=uri, duration_ms=plan.length_ms,
                              language=language, words=words, terms=terms, model=model)
        else:
            if part_file is not None:
                check_cut(await cutter.cut(source, part_file, start_ms=plan.offset_ms,
                                           length_ms=plan.length_ms, channel=channel),
                          plan, job=job, provider=recognizer.provider)
            audio = AudioPart(path=audio_path, uri=None, duration_ms=plan.length_ms,
                              language=language, words=words, on_speech=on_speech,
                              terms=terms, model=model)
        limit = recognizer.time_limit_seconds(plan.length_ms)
        # Counted by the kill -9 tests: a part started twice is a part paid twice.
        log.info("recognition_started", record_id=job.record_id, part=plan.index,
                 provider=recognizer.provider)
        if capabilities.runs is Runs.HERE:
            # The progress of this part moves from now (docs/pipeline.md, "Progress and ETA").
            await job.writer.ask(MarkPartStarted(recognition_id=row.id,
                                                 record_id=job.record_id, token=job.token))
        started = job.clock.monotonic()
        try:
            async with asyncio.timeout(limit):
                submitted = await recognizer.submit(audio)
        except TimeoutError:
            raise TransientFailure(
                f"recognition ran past its limit of {int(limit or 0)} s") from None
        if capabilities.runs is Runs.HERE:
            # Local work's speed, measured on every part, a short record's one part too
            # (a remote operation's is measured by the poll that finds it done).
            await job.writer.ask(MeasureSpeed(
                provider=recognizer.provider, model=recognizer.model, audio_ms=plan.length_ms,
                work_ms=round((job.clock.monotonic() - started) * 1000)))
    finally:
        if part_file is not None:
            part_file.unlink(missing_ok=True)
    if submitted.payload is not None:
        await save_payload(job, row, submitted.payload, ext=recognizer.payload_ext)
    await job.writer.ask(SetExternalId(
        recognition_id=row.id, record_id=job.record_id, token=job.token,
        external_id=submitted.external_id, replace=again,
    ))
    log.info("recognition_submitted", record_id=job.record_id, part=plan.index,
             provider=recognizer.provider)
    return row


async def save_payload(job: Job, row: Recognition, payload: bytes, *, ext: str) -> None:
    """The raw provider answer as a file of the record (never a column), then its rows."""
    file_id, temp = job.files.temp_path(job.record_id, ext)
    try:
        await asyncio.to_thread(temp.write_bytes, payload)
        placed = await job.files.finalize(job.record_id, file_id, temp)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    try:
        await job.writer.ask(SavePayload(
            recognition_id=row.id, record_id=job.record_id, token=job.token,
            file=StoredFile(id=placed.file_id, file_name=placed.file_name,
                            size_bytes=placed.size_bytes, format=placed.format),
        ))
    except PayloadAlreadySaved:
        await job.files.discard(placed)
    except BaseException:
        with contextlib.suppress(OSError):
            await job.files.discard(placed)
        raise
