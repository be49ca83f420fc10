"""`stream=true` on `/v1/audio/transcriptions`: server-sent events as OpenAI sends them.

A long record is recognized part by part (`recognizer.part_seconds`), and each
part's answer is saved as it finishes. While the request waits, the parts saved
since the last look are read in order and each recognized utterance is sent as a
`transcript.text.delta` (its text and a space), so a client shows text long before
the record is done. When it is done, `transcript.text.done` carries the whole
current transcript, which is the one to keep: the deltas are the recognizer's raw
parts (before speakers are told apart; of a stereo call, the first channel). A
halt, the wait's end or a revoked token end the stream with an `error` event in
OpenAI's error shape (OpenAI's SDKs raise it as an `APIError`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import orjson
from aiohttp import web

from transcriber.db import reads
from transcriber.db.reads.recognitions import Recognition
from transcriber.domain.transcripts import Utterance, one_line
from transcriber.providers.recognizers import saved_answer_formats
from transcriber.web import keys

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


class PartReader:
    """The utterances of a record's parts saved since the last look, in part order (a
    part is read only once every part before it was), each on the record's timeline."""

    def __init__(self, app: web.Application, record_id: str) -> None:
        self._app = app
        self._record_id = record_id
        self._next = 0
        recognizer = app.get(keys.RECOGNIZER)
        self._own = (recognizer.provider, recognizer.parse) if recognizer else None

    async def new_utterances(self) -> list[Utterance]:
        rows = await reads.recognitions.recognitions(self._app[keys.READERS],
                                                     record_id=self._record_id)
        firsts = {row.part_index: row for row in rows if row.channel in (None, 0)}
        found: list[Utterance] = []
        while (row := firsts.get(self._next)) is not None and row.payload_file is not None:
            found += await self._utterances(row)
            self._next += 1
        return found

    async def _utterances(self, row: Recognition) -> list[Utterance]:
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
            answer = self._own[1](payload)
        else:
            known = saved_answer_formats(self._app[keys.SETTINGS]).get(row.provider)
            if known is None:
                return []
            answer = known.parse(payload)
        return [Utterance(start_ms=u.start_ms + row.offset_ms, end_ms=u.end_ms + row.offset_ms,
                          channel=u.channel, text=u.text) for u in answer.utterances]
