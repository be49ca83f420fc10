"""`submitted → transcribed`: wait for every part, then build the transcript.

While any part's operation runs the step defers with the fixed delays (the
first check `poll_first_delay_seconds` after the start, then every
`poll_delay_seconds`), spending no attempts (P12). The delays hold per operation:
a run woken for one part (started later, or just resubmitted) checks only the parts
whose own delay has passed, so with parts started at different times no operation
is asked again sooner than `poll_delay_seconds` after its last check (the time of each
operation's last check is kept in the step, per process). A finished part's raw
answer is saved as a file of the record at once, so no answer is fetched
(or paid for) twice. When all parts are in, they are parsed, stitched on one
timeline and written as the structure and the transcript text.
A record resumed after a `stuck` halt polls the same operations (P11).

A stereo call's utterances carry their channel (SpeechKit's `channelTag`, or
the channel a local part recognized) and the speaker it stands for, merged on
one timeline; the mono clustering is not run. Whichever engine named the
speakers, they are numbered by first appearance as the last step
(`speakers.by_first_appearance`): the same audio gives the same labels.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

import structlog

from transcriber.core.clock import parse_time
from transcriber.core.errors import PermanentFailure
from transcriber.core.observability import TRANSCRIPT_QUALITY
from transcriber.db.commands.progress import MeasureSpeed
from transcriber.db.commands.recognition import Recognition
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.domain.voices import VoiceWindows
from transcriber.pipeline.assessment import report_of
from transcriber.pipeline.effects import SaveTranscript, SetColumns
from transcriber.pipeline.part_rows import channel_plans, save_payload, submit_part
from transcriber.pipeline.parts import PartPlan, join, stitch
from transcriber.pipeline.speakers import (
    by_first_appearance,
    segments_of,
    speakers_found_locally,
    speech_of,
)
from transcriber.pipeline.step import Advanced, Deferred, Job, Outcome
from transcriber.pipeline.steps._common import (
    StepRecord,
    file_name_of,
    load_recognitions,
    load_record,
)
from transcriber.pipeline.voices import voice_rules, voices_effect
from transcriber.ports import (
    Answer,
    AnswerFormat,
    ObjectStore,
    OperationFailed,
    PartCutter,
    PollLater,
    Recognizer,
    SpeakerSeparator,
    SpeakersUnavailable,
    Utterance,
)

log = structlog.get_logger(__name__)

def plans_of(rows: Sequence[Recognition], *, duration_ms: int, overlap_ms: int) -> list[PartPlan]:
    """Pure: the parts' spans, rebuilt from the stored offsets (per channel)."""
    return [plan for plan, _ in channel_plans(rows, duration_ms=duration_ms,
                                              overlap_ms=overlap_ms)]


def merge_channels(parts: Sequence[tuple[PartPlan, int | None, list[Utterance]]], *,
                   overlap_ms: int) -> list[Utterance]:
    """Pure: the parts on one timeline. Each channel's parts are joined (cut in
    pauses) or stitched (overlapping) on their own; a part that recognized one
    channel gives its utterances that channel; the channels merge by time."""
    by_channel: dict[int | None, list[tuple[PartPlan, list[Utterance]]]] = {}
    for plan, channel, found in parts:
        heard = found if channel is None else [replace(u, channel=channel) for u in found]
        by_channel.setdefault(channel, []).append((plan, heard))
    merged = [u for group in by_channel.values()
              for u in (join(group) if overlap_ms == 0 else stitch(group))]
    if len(by_channel) > 1:
        merged.sort(key=lambda u: (u.start_ms, u.channel, u.end_ms))
    return merged


def channel_speakers(utterances: Sequence[Utterance]) -> list[Utterance]:
    """Pure: a stereo call's speakers are its channels: 0 is S1, 1 is S2 (numbered
    again by first appearance before the transcript is saved)."""
    return [replace(u, speaker=f"S{u.channel + 1}") for u in utterances]


def on_one_channel(utterances: Sequence[Utterance]) -> list[Utterance]:
    """Pure: a mono copy's utterances are all on channel 0. SpeechKit's speaker
    labeling answers each speaker under its own `channelTag`: on mono audio the
    tag is the speaker (already given), not a channel."""
    return [u if u.channel == 0 else replace(u, channel=0) for u in utterances]


def first_check_wait(started_at: str | None, *, now_seconds: float,
                     first_delay_seconds: float) -> float:
    """Pure: seconds until a just-started operation is worth its first status check."""
    if started_at is None:
        return 0.0
    elapsed = now_seconds - parse_time(started_at).timestamp()
    return max(first_delay_seconds - elapsed, 0.0)


def poll_wait(started_at: str | None, last_check: float | None, *, now_seconds: float,
              first_delay_seconds: float, delay_seconds: float) -> float:
    """Pure: seconds until an operation may be checked: its first delay from the start,
    and `delay_seconds` from its own last check."""
    wait = first_check_wait(started_at, now_seconds=now_seconds,
                            first_delay_seconds=first_delay_seconds)
    if last_check is not None:
        wait = max(wait, last_check + delay_seconds - now_seconds)
    return wait


# Past this many remembered checks, those older than a delay (which decide nothing
# any more) are forgotten: records halted or deleted mid-poll leave theirs behind.
_CHECKS_KEPT = 4096


class PollStep:
    name = "poll"

    def __init__(self, recognizer: Recognizer, *, store: ObjectStore | None,
                 cutter: PartCutter, formats: Mapping[str, AnswerFormat],
                 separator: SpeakerSeparator | None = None) -> None:
        self._recognizer = recognizer
        self._separator = separator
        # A saved answer is read by the provider that made it, with the capabilities its
        # parts were cut with, whatever is configured now (a record submitted before the
        # provider changed).
        self._formats = {**formats, recognizer.provider: AnswerFormat(
            capabilities=recognizer.capabilities, parse=recognizer.parse)}
        self._store = store
        self._cutter = cutter
        # Operation id → the clock time it was last checked.
        self._checked: dict[str, float] = {}

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        rows = await load_recognitions(job)
        if not rows:
            raise PermanentFailure("no recognition was submitted for this record")
        pipeline = job.settings.pipeline
        overlap_ms = self._format_of(rows[0].provider).capabilities.part_overlap_ms
        plans = {p.index: p for p in plans_of(rows, duration_ms=record.duration_ms,
                                               overlap_ms=overlap_ms)}
        waits: list[float] = []
        for row in rows:
            if row.payload_file is not None:
                continue
            if row.external_id is None:
                raise PermanentFailure("a recognition part has no operation id")
            now = job.clock.now().timestamp()
            wait = poll_wait(row.started_at, self._checked.get(row.external_id),
                             now_seconds=now,
                             first_delay_seconds=pipeline.poll_first_delay_seconds,
                             delay_seconds=pipeline.poll_delay_seconds)
            if wait > 0:
                waits.append(wait)
                continue
            if row.provider != self._recognizer.provider:
                raise PermanentFailure(
                    f"part started with {row.provider}, but {self._recognizer.provider} "
                    "is configured")
            self._remember(row.external_id, now, delay_seconds=pipeline.poll_delay_seconds)
            try:
                payload = await self._recognizer.fetch(row.external_id)
            except PollLater as exc:
                return Deferred(delay_seconds=exc.wait_seconds)
            except OperationFailed as exc:
                log.warning("recognition_restarted", record_id=job.record_id,
                            part=row.part_index, reason=exc.reason)
                await submit_part(job, plans[row.part_index], recognizer=self._recognizer,
                                  store=self._store, cutter=self._cutter,
                                  normalized=record.normalized_file_name or "",
                                  whole=len(rows) == 1, again=True,
                                  language=record.language, channel=row.channel,
                                  model=record.model_wanted)
                waits.append(pipeline.poll_first_delay_seconds)
                continue
            if payload is None:
                waits.append(pipeline.poll_delay_seconds)
                continue
            await save_payload(job, row, payload, ext=self._recognizer.payload_ext)
            if row.started_at is not None:
                # A remote operation's speed as seen from here (to the poll's precision).
                elapsed = job.clock.now().timestamp() - parse_time(row.started_at).timestamp()
                await job.writer.ask(MeasureSpeed(
                    provider=row.provider, model=row.model,
                    audio_ms=plans[row.part_index].length_ms, work_ms=round(elapsed * 1000)))
        if waits:
            return Deferred(delay_seconds=min(waits))
        for row in rows:
            if row.external_id is not None:
                self._checked.pop(row.external_id, None)
        return await self._transcribed(job, plans, overlap_ms=overlap_ms)

    def _format_of(self, provider: str) -> AnswerFormat:
        found = self._formats.get(provider)
        if found is None:
            raise PermanentFailure(f"no parser for provider {provider}")
        return found

    def _remember(self, operation: str, now: float, *, delay_seconds: float) -> None:
        if len(self._checked) >= _CHECKS_KEPT:
            self._checked = {key: at for key, at in self._checked.items()
                             if at + delay_seconds > now}
        self._checked[operation] = now

    async def _transcribed(self, job: Job, plans: Mapping[int, PartPlan], *,
                           overlap_ms: int) -> Outcome:
        rows = await load_recognitions(job)  # re-read: payload files were just saved
        parts: list[tuple[PartPlan, int | None, list[Utterance]]] = []
        answers: list[tuple[PartPlan, Answer]] = []
        detected: str | None = None
        models: list[str] = []
        for row in rows:
            if row.payload_file is None:
                raise PermanentFailure("a finished part lost its saved answer")
            answer_format = self._format_of(row.provider)
            name = await file_name_of(job, row.payload_file)
            try:
                path = await job.files.local_path(job.record_id, name)
                payload = await asyncio.to_thread(path.read_bytes)
            except FileNotFoundError:
                raise PermanentFailure("a saved recognition answer is missing") from None
            answer = answer_format.parse(payload)
            parts.append((plans[row.part_index], row.channel, list(answer.utterances)))
            answers.append((plans[row.part_index], answer))
            detected = detected or answer.language
            made_by = answer.model or row.model
            if made_by and made_by not in models:
                models.append(made_by)
        # Parts cut in pauses with no overlap keep all their words; overlapping ones
        # keep each utterance in the part that holds its midpoint.
        utterances = merge_channels(parts, overlap_ms=overlap_ms)
        log.info("recognition_finished", record_id=job.record_id, parts=len(parts),
                 utterances=len(utterances))
        record = await load_record(job)
        voices: VoiceWindows | None = None
        if record.channels > 1:
            utterances = channel_speakers(utterances)
            voices = await self._channel_voices(job, record, utterances)
        else:
            utterances = on_one_channel(utterances)
            # `recognizer.diarization`: the setting keeps its user-facing name (a contract).
            if speakers_found_locally(job.settings.recognizer.diarization,
                                      speakers=record.speakers,
                                      duration_ms=record.duration_ms, channels=record.channels,
                                      labels={self._format_of(row.provider)
                                              .capabilities.speakers for row in rows},
                                      overlap_ms=overlap_ms):
                utterances, voices = await self._with_speakers(job, record, answers,
                                                               utterances)
        # Whichever engine named them, the same voices get the same labels (S1 first).
        utterances = by_first_appearance(utterances)
        # Made once, here, from what the recognizer said of its own work (it cannot be
        # made again later: the answers' unclear speech is never saved as text).
        report = dataclasses.replace(report_of(answers, utterances),
                                     model=", ".join(models) or None)
        TRANSCRIPT_QUALITY.labels(report.verdict).inc()
        log.info("transcript_quality", record_id=job.record_id, verdict=report.verdict,
                 reasons=list(report.reasons), speech_ms=report.speech_ms,
                 unclear_ms=report.unclear_ms)
        return Advanced(effects=(SaveTranscript(text=plain_text(utterances),
                                                structure_json=dump_structure(utterances)),
                                 SetColumns(values={"detected_language": detected,
                                                    "quality": report.to_json(),
                                                    "model": ", ".join(models) or None}),
                                 voices_effect(job.settings, voices, utterances)))

    async def _channel_voices(self, job: Job, record: StepRecord,
                              utterances: list[Utterance]) -> VoiceWindows | None:
        """A stereo call's voices, each channel's embedded on its own, when known voices
        are kept; `None` when not, or when the speaker model cannot be had."""
        if (self._separator is None or voice_rules(job.settings) is None
                or not record.normalized_file_name or not utterances):
            return None
        audio = await job.files.local_path(job.record_id, record.normalized_file_name)
        try:
            return await self._separator.channel_voices(audio, utterances)
        except SpeakersUnavailable as exc:
            log.warning("channel_voices_skipped", record_id=job.record_id,
                        reason=type(exc).__name__)
            return None

    async def _with_speakers(self, job: Job, record: StepRecord,
                             answers: Sequence[tuple[PartPlan, Answer]],
                             utterances: list[Utterance],
                             ) -> tuple[list[Utterance], VoiceWindows | None]:
        """The utterances labelled by speaker (with the windows embedded) when the record's
        speakers are told apart; as they are when not, or when the speaker model cannot
        be had (one warning)."""
        if self._separator is None or not record.normalized_file_name:
            return utterances, None
        segments, speech = segments_of(utterances), speech_of(answers)
        audio = await job.files.local_path(job.record_id, record.normalized_file_name)
        started = time.perf_counter()  # a measurement for the log, not a decision
        try:
            separated = await self._separator.separate(audio, segments,
                                                       num_speakers=record.speakers,
                                                       speech=speech)
        except SpeakersUnavailable as exc:
            log.warning("speakers_skipped", record_id=job.record_id,
                        reason=type(exc).__name__)
            return utterances, None
        log.info("speakers_found", record_id=job.record_id,
                 speakers=len({u.speaker for u in separated.utterances}),
                 seconds=round(time.perf_counter() - started, 2))
        return separated.utterances, separated.voices
