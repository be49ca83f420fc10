"""`stream=true` on `/v1/audio/transcriptions`: server-sent events as OpenAI sends them.

A long record is recognized part by part (`recognizer.part_seconds`), and each
part's answer is saved as it finishes. While the request waits, the spans saved
since the last look are read in time order and each recognized utterance is sent
as a `transcript.text.delta` (its text and a space), so a client shows text long
before the record is done. A span is sent once every part of it is saved: a
stereo call recognized channel by channel has a part per channel for each span
(`part_index` 2k + c, recognized in that order), and the span's utterances of
both channels are sent in time order, as the final transcript orders them. When
the record is done, `transcript.text.done` carries the whole current transcript,
which is the one to keep: the deltas are the recognizer's raw parts (before
speakers are told apart or the overlap of overlapping parts is dropped). A halt,
the wait's end or a revoked token end the stream with an `error` event in
OpenAI's error shape (OpenAI's SDKs raise it as an `APIError`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import orjson
import structlog
from aiohttp import web

from transcriber.core.observability import OPENAI_TRANSCRIPTIONS
from transcriber.db import reads
from transcriber.db.reads.recognitions import Recognition
from transcriber.domain.transcripts import Utterance, one_line
from transcriber.providers.recognizers import saved_answer_formats
from transcriber.web import keys
from transcriber.web.archive import current_utterances
from transcriber.web.openai_shapes import plain
from transcriber.web.openai_wait import (
    LOOK_SECONDS,
    NO_RETRY,
    client_gone,
    outcome,
    token_valid,
    wait_settled,
)

log = structlog.get_logger(__name__)

CONTENT_TYPE = "text/event-stream"


def event_bytes(event: dict[str, Any]) -> bytes:
    """One server-sent event: its JSON on a `data:` line and the blank line after it."""
    return b"data: " + orjson.dumps(event) + b"\n\n"


def delta_events(utterances: Sequence[Utterance]) -> list[dict[str, Any]]:
    """Pure: one `transcript.text.delta` per spoken utterance, each ending in a space."""
    return [{"type": "transcript.text.delta", "delta": one_line(u.text).strip() + " "}
            for u in utterances if u.text.strip()]


def done_event(text: str) -> dict[str, Any]:
    return {"type": "transcript.text.done", "text": text}


def error_event(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"message": message, "type": "invalid_request_error",
                                       "param": None, "code": code}}


def spans(rows: Sequence[Recognition]) -> list[list[Recognition]]:
    """Pure: the record's parts grouped by the span they recognize (one row, or one
    per channel of a stereo call), in time order."""
    by_offset: dict[int, list[Recognition]] = {}
    for row in rows:
        by_offset.setdefault(row.offset_ms, []).append(row)
    return [sorted(by_offset[offset], key=lambda r: r.part_index) for offset in sorted(by_offset)]


def in_time_order(heard: Sequence[tuple[Recognition, Sequence[Utterance]]], *,
                  high_ms: int | None) -> list[Utterance]:
    """Pure: one span's utterances (each part's, on its own times) on the record's
    timeline, held inside the span [offset, `high_ms`] as the transcript's join holds
    them, a channel's part giving its utterances that channel; ordered as the
    transcript merges channels (start, channel, end)."""
    placed: list[Utterance] = []
    for row, utterances in heard:
        low = row.offset_ms
        for u in utterances:
            start = max(u.start_ms + low, low)
            end = max(u.end_ms + low, start)
            if high_ms is not None:
                start, end = min(start, high_ms), min(end, high_ms)
            placed.append(dataclasses.replace(
                u, start_ms=start, end_ms=end, words=(),
                channel=u.channel if row.channel is None else row.channel))
    return sorted(placed, key=lambda u: (u.start_ms, u.channel, u.end_ms))


class PartReader:
    """The utterances of a record's spans saved since the last look, in time order (a
    span is read only once every part of it, and every span before it, is saved)."""

    def __init__(self, app: web.Application, record_id: str) -> None:
        self._app = app
        self._record_id = record_id
        self._next = 0
        recognizer = app.get(keys.RECOGNIZER)
        self._own = (recognizer.provider, recognizer.parse) if recognizer else None

    async def new_utterances(self) -> list[Utterance]:
        rows = await reads.recognitions.recognitions(self._app[keys.READERS],
                                                     record_id=self._record_id)
        ordered = spans(rows)
        found: list[Utterance] = []
        while self._next < len(ordered):
            span = ordered[self._next]
            if any(row.payload_file is None for row in span):
                break
            heard = [(row, await self._utterances(row)) for row in span]
            if self._next + 1 < len(ordered):
                high: int | None = ordered[self._next + 1][0].offset_ms
            else:  # the last span reaches the end of the normalized copy
                state = await reads.records.state(self._app[keys.READERS],
                                                  record_id=self._record_id)
                high = None if state is None else state.duration_ms
            found += in_time_order(heard, high_ms=high)
            self._next += 1
        return found

    async def _utterances(self, row: Recognition) -> Sequence[Utterance]:
        assert row.payload_file is not None
        name = await reads.records.file_name(self._app[keys.READERS], file_id=row.payload_file)
        if name is None:
            return []
        try:
            path = await self._app[keys.FILES].local_path(self._record_id, name)
            payload = await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            return []  # the record was deleted meanwhile: the wait says so
        if self._own is not None and row.provider == self._own[0]:
            return self._own[1](payload).utterances
        known = saved_answer_formats(self._app[keys.SETTINGS]).get(row.provider)
        return [] if known is None else known.parse(payload).utterances


# Why a stream ends without the transcript, as its error event says it.
_STREAM_ENDS = {
    "timed_out": ("timeout", "not transcribed within server.openai_wait_seconds; the "
                             "record goes on in the archive"),
    "deleted": ("not_found", "the record was deleted before it was transcribed"),
    "revoked": ("unauthorized", "the API key was revoked (or expired) while the request "
                                "waited"),
}


async def stream_answer(request: web.Request, record_id: str, *, arrived: float,
                        seconds: float) -> web.StreamResponse:
    """The parts' utterances as they are saved, then the whole transcript, or an error
    event; the wait is the same as a whole answer's (`openai_wait`)."""
    response = web.StreamResponse(headers={
        "Content-Type": CONTENT_TYPE, "Cache-Control": "no-cache",
        "X-Transcriber-Record": record_id, **NO_RETRY})
    await response.prepare(request)
    parts = PartReader(request.app, record_id)
    clock = request.app[keys.CLOCK]
    while True:
        for event in delta_events(await parts.new_utterances()):
            await response.write(event_bytes(event))
        left = arrived + seconds - clock.monotonic()
        waited = await wait_settled(request.app, record_id, seconds=min(LOOK_SECONDS, left),
                                    gone=client_gone(request), allowed=token_valid(request))
        if waited != "timed_out" or left <= LOOK_SECONDS:
            break
    ended = outcome(waited)
    OPENAI_TRANSCRIPTIONS.labels(ended).inc()
    log.info("openai_transcription", record_id=record_id, outcome=ended, stream=True)
    if waited == "client_gone":
        return response
    if ended == "done":
        for event in delta_events(await parts.new_utterances()):
            await response.write(event_bytes(event))
        utterances = await current_utterances(request, record_id)
        final = done_event(plain(utterances or []))
    else:
        final = error_event(*_STREAM_ENDS.get(ended, (
            "transcription_failed", f"the recording could not be transcribed; it is kept as "
                                    f"record {record_id}")))
    await response.write(event_bytes(final))
    await response.write_eof()
    return response
