"""`normalized → submitted`: start a recognition per part, paying at most once (P13).

For each part (one, or overlapping parts of a record longer than the
provider's limit) the `recognitions` row is written *before* the paid call.
A retried step finds the row: with an external id it submits nothing; for a
remote provider it uploads only when HEAD does not find the object. A
recognizer that runs here (`Runs.HERE`) finishes within the call: its answer is
saved here as a file, exactly as `poll` saves a fetched one, one part per claim.
The part bookkeeping both steps share is `pipeline.part_rows`.
"""

from __future__ import annotations

import structlog

from transcriber.core.errors import PermanentFailure
from transcriber.db.commands.recognition import Recognition, RegisterParts
from transcriber.pipeline.effects import SetColumns
from transcriber.pipeline.part_rows import channel_plans, check_parts, submit_part
from transcriber.pipeline.parts import plan_at_pauses, plan_parts
from transcriber.pipeline.speakers import speakers_apply, speakers_found_locally
from transcriber.pipeline.step import Advanced, Deferred, Job, Outcome
from transcriber.pipeline.steps._common import StepRecord, load_recognitions, load_record
from transcriber.ports import (
    Capabilities,
    ObjectStore,
    PartCutter,
    Recognizer,
    Runs,
    SpeakerSeparator,
    SpeechSink,
)

log = structlog.get_logger(__name__)


class SubmitStep:
    name = "submit"

    def __init__(self, recognizer: Recognizer, *, store: ObjectStore | None,
                 cutter: PartCutter, separator: SpeakerSeparator | None = None) -> None:
        if recognizer.capabilities.needs_object_store and store is None:
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
        capabilities = self._recognizer.capabilities
        if capabilities.runs is Runs.HERE and capabilities.max_part_ms is not None:
            longest_ms = min(longest_ms, capabilities.max_part_ms)
        return self._recognizer.time_limit_seconds(longest_ms)

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        if not record.normalized_file_name:
            raise PermanentFailure("the record has no normalized copy")
        capabilities = self._recognizer.capabilities
        overlap_ms = capabilities.part_overlap_ms
        plans = plan_parts(record.duration_ms, max_part_ms=capabilities.max_part_ms,
                           overlap_ms=overlap_ms)
        check_parts(plans, record.duration_ms, job=job, provider=capabilities.provider)
        words = wants_words(job, record, capabilities)
        one_part = len(plans) == 1 and record.channels == 1
        on_speech = await self._prepare_speakers(job, record, overlap_ms=overlap_ms,
                                           speech_follows=one_part)
        try:
            if capabilities.runs is Runs.HERE and not one_part:
                return await self._one_part(job, record.duration_ms,
                                            normalized=record.normalized_file_name,
                                            words=words, channels=record.channels,
                                            language=record.language,
                                            model=record.model_wanted)
            first: Recognition | None = None
            for plan in plans:
                row = await submit_part(job, plan, recognizer=self._recognizer,
                                        store=self._store, cutter=self._cutter,
                                        normalized=record.normalized_file_name,
                                        whole=len(plans) == 1, language=record.language,
                                        words=words, on_speech=on_speech,
                                        model=record.model_wanted)
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
                                      labels={self._recognizer.capabilities.speakers},
                                      overlap_ms=overlap_ms):
            return None
        return self._separator.prepare(
            await job.files.local_path(job.record_id, record.normalized_file_name),
            num_speakers=record.speakers, speech_follows=speech_follows)

    async def _one_part(self, job: Job, duration_ms: int, *, normalized: str,
                        words: bool = False, channels: int = 1,
                        language: str | None = None,
                        model: str | None = None) -> Outcome:
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
        capabilities = recognizer.capabilities
        overlap_ms = capabilities.part_overlap_ms
        rows = await load_recognitions(job)
        if not rows:
            assert capabilities.max_part_ms is not None
            pauses = await self._cutter.pauses(
                await job.files.local_path(job.record_id, normalized))
            cut = plan_at_pauses(duration_ms, pauses, part_ms=capabilities.max_part_ms,
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
                              words=words, channel=channel, language=language,
                              model=model)
            log.info("recognition_part_done", record_id=job.record_id, part=plan.index,
                     parts=len(plans), channel=channel)
            if len(pending) > 1:
                return Deferred(delay_seconds=0.0)
        return Advanced(effects=(SetColumns(values={"recognition_id": rows[0].id}),))


def wants_words(job: Job, record: StepRecord, capabilities: Capabilities) -> bool:
    """Whether the recognizer is asked for word times: when the record's speakers are
    told apart (`speakers.speakers_apply`); a stereo call's speakers are its
    channels, no words needed."""
    # `recognizer.diarization`: the setting keeps its user-facing name (a contract).
    return record.channels == 1 and speakers_apply(
        job.settings.recognizer.diarization, speakers=record.speakers,
        duration_ms=record.duration_ms, labels=capabilities.speakers)


