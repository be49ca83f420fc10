"""`normalized → submitted`: start a recognition per part, paying at most once (P13).

For each part (one, or overlapping parts of a record longer than the
provider's limit) the `recognitions` row is written *before* the paid call.
A retried step finds the row: with an external id it submits nothing; for a
remote provider it uploads only when HEAD does not find the object. A
provider that finishes within the call (local Whisper) has its answer saved
here as a file, exactly as `poll` saves a fetched one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.core.observability import RECOGNITION_UNCOVERED_SECONDS
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.progress import MeasureSpeed
from transcriber.db.commands.recognition import (
    MarkPartStarted,
    PayloadAlreadySaved,
    Recognition,
    RegisterParts,
    RegisterRecognition,
    SavePayload,
    SetExternalId,
)
from transcriber.pipeline.effects import SetColumns
from transcriber.pipeline.parts import (
    PartPlan,
    plan_at_pauses,
    plan_parts,
    plans_from_offsets,
    uncovered_by_parts,
)
from transcriber.pipeline.speakers import speakers_apply, speakers_found_locally
from transcriber.pipeline.step import Advanced, Deferred, Job, Outcome
from transcriber.pipeline.steps._common import (
    StepRecord,
    load_recognitions,
    load_record,
    overlap_ms_of,
)
from transcriber.ports import (
    AudioPart,
    ObjectStore,
    PartCutter,
    Recognizer,
    SpeakerSeparator,
    SpeechSink,
)

log = structlog.get_logger(__name__)

# A part cut by stream copy starts and ends on an Opus packet (20 ms) and an OGG page:
# it may differ from its plan by a fraction of a second, never by more than this.
CUT_SHORT_TOLERANCE_MS = 1000

def object_key(prefix: str, record_id: str, part_index: int) -> str:
    """Where a record's part lives in the bucket: ids only, never a sender's name."""
    return f"{prefix}{record_id}/part-{part_index:03d}.ogg"


class SubmitStep:
    name = "submit"

    def __init__(self, recognizer: Recognizer, *, store: ObjectStore | None,
                 cutter: PartCutter, separator: SpeakerSeparator | None = None) -> None:
        if recognizer.needs_object_store and store is None:
            raise PermanentFailure(f"the {recognizer.provider} recognizer needs object storage")
        self._recognizer = recognizer
        self._store = store
        self._cutter = cutter
        self._separator = separator

    def time_limit_seconds(self, job: Job) -> float | None:
        # The actor asks before the record is read: bound by the longest part (a recognizer
        # that works part by part) or the longest record accepted (the normalized copy stops
        # there); inside `run` each part is bounded by its own length.
        longest_ms = job.settings.server.record_max_seconds * 1000
        if self._recognizer.finishes_in_submit and self._recognizer.max_part_ms is not None:
            longest_ms = min(longest_ms, self._recognizer.max_part_ms)
        return self._recognizer.time_limit_seconds(longest_ms)

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        if not record.normalized_file_name:
            raise PermanentFailure("the record has no normalized copy")
        overlap_ms = overlap_ms_of(job.settings, self._recognizer.provider)
        plans = plan_parts(record.duration_ms, max_part_ms=self._recognizer.max_part_ms,
                           overlap_ms=overlap_ms)
        check_parts(plans, record.duration_ms, job=job, provider=self._recognizer.provider)
        words = wants_words(job, record, self._recognizer)
        one_part = len(plans) == 1 and record.channels == 1
        on_speech = await self._prepare_speakers(job, record, overlap_ms=overlap_ms,
                                           speech_follows=one_part)
        try:
            if self._recognizer.finishes_in_submit and not one_part:
                return await self._one_part(job, record.duration_ms,
                                            normalized=record.normalized_file_name,
                                            words=words, channels=record.channels)
            first: Recognition | None = None
            for plan in plans:
                row = await submit_part(job, plan, recognizer=self._recognizer,
                                        store=self._store, cutter=self._cutter,
                                        normalized=record.normalized_file_name,
                                        whole=len(plans) == 1, language=record.language,
                                        words=words, on_speech=on_speech)
                first = first or row
        finally:
            if on_speech is not None:
                on_speech(None)  # no regions came (no-op when they did): the job finds its own
        assert first is not None
        return Advanced(effects=(SetColumns(values={"recognition_id": first.id}),))

    async def _prepare_speakers(self, job: Job, record: StepRecord, *, overlap_ms: int,
                          speech_follows: bool) -> SpeechSink | None:
        """The speaker turns started beside the recognition when the poll step will
        label the record's speakers (every claim asks again: after a restart the job is gone;
        a job kept for the same file is not started twice). A record recognized as one
        part hands its job the recognizer's speech regions through the sink returned."""
        if self._separator is None or not record.normalized_file_name:
            return None
        # `recognizer.diarization`: the setting keeps its user-facing name (a contract).
        if not speakers_found_locally(job.settings.recognizer.diarization,
                                      speakers=record.speakers,
                                      duration_ms=record.duration_ms, channels=record.channels,
                                      providers={self._recognizer.provider},
                                      overlap_ms=overlap_ms):
            return None
        return self._separator.prepare(
            await job.files.local_path(job.record_id, record.normalized_file_name),
            num_speakers=record.speakers, speech_follows=speech_follows)

    async def _one_part(self, job: Job, duration_ms: int, *, normalized: str,
                        words: bool = False, channels: int = 1) -> Outcome:
        """Local work: recognize the first unfinished part (of one channel, for a
        stereo copy), its answer saved at once.

        The first claim cuts the record at pauses near every part length and
        registers every part's row (the progress knows the total from then on);
        the record stays in its stage (a zero deferral, no attempt spent) until
        the last part is in. A later claim, after a crash too, reads the cut from
        the rows and starts at the first part without a saved answer, so a
        finished part is never recognized again.
        """
        recognizer = self._recognizer
        overlap_ms = overlap_ms_of(job.settings, recognizer.provider)
        rows = await load_recognitions(job)
        if not rows:
            assert recognizer.max_part_ms is not None
            pauses = await self._cutter.pauses(
                await job.files.local_path(job.record_id, normalized))
            cut = plan_at_pauses(duration_ms, pauses, part_ms=recognizer.max_part_ms,
                                 overlap_ms=overlap_ms)
            rows = await job.writer.ask(RegisterParts(
                record_id=job.record_id, token=job.token,
                offsets=tuple(p.offset_ms for p in cut), provider=recognizer.provider,
                model=recognizer.model, channels=channels))
        plans = channel_plans(rows, duration_ms=duration_ms, overlap_ms=overlap_ms)
        check_parts([plan for plan, _ in plans], duration_ms, job=job,
                    provider=recognizer.provider)
        saved = {r.part_index for r in rows if r.payload_file is not None}
        pending = [(plan, channel) for plan, channel in plans if plan.index not in saved]
        if pending:
            plan, channel = pending[0]
            await submit_part(job, plan, recognizer=recognizer, store=self._store,
                              cutter=self._cutter, normalized=normalized, whole=False,
                              words=words, channel=channel)
            log.info("recognition_part_done", record_id=job.record_id, part=plan.index,
                     parts=len(plans), channel=channel)
            if len(pending) > 1:
                return Deferred(delay_seconds=0.0)
        return Advanced(effects=(SetColumns(values={"recognition_id": rows[0].id}),))


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


def wants_words(job: Job, record: StepRecord, recognizer: Recognizer) -> bool:
    """Whether the recognizer is asked for word times: when the record's speakers are
    told apart (`speakers.speakers_apply`); a stereo call's speakers are its
    channels, no words needed."""
    # `recognizer.diarization`: the setting keeps its user-facing name (a contract).
    return record.channels == 1 and speakers_apply(
        job.settings.recognizer.diarization, speakers=record.speakers,
        duration_ms=record.duration_ms, provider=recognizer.provider)


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
) -> Recognition:
    """Register, make readable, start; `again` restarts a part whose operation failed.
    With `channel`, the recognizer hears that channel of a stereo copy alone."""
    key = object_key(job.settings.s3.prefix, job.record_id, plan.index)
    uri = store.uri(key) if store is not None and recognizer.needs_object_store else None
    row = await job.writer.ask(register(job, plan, recognizer, uri, channel))
    if not again and (row.external_id is not None or row.payload_file is not None):
        log.info("submit_skipped", record_id=job.record_id, part=plan.index,
                 reason="already_submitted")
        return row
    source = await job.files.local_path(job.record_id, normalized)
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
                              language=language, words=words)
        else:
            if part_file is not None:
                check_cut(await cutter.cut(source, part_file, start_ms=plan.offset_ms,
                                           length_ms=plan.length_ms, channel=channel),
                          plan, job=job, provider=recognizer.provider)
            audio = AudioPart(path=audio_path, uri=None, duration_ms=plan.length_ms,
                              language=language, words=words, on_speech=on_speech)
        limit = recognizer.time_limit_seconds(plan.length_ms)
        # Counted by the kill -9 tests: a part started twice is a part paid twice.
        log.info("recognition_started", record_id=job.record_id, part=plan.index,
                 provider=recognizer.provider)
        if recognizer.finishes_in_submit:
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
        if recognizer.finishes_in_submit:
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
