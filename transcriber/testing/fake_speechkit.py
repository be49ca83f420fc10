"""A fake SpeechKit v3 async API on loopback, following the real wire formats.

- `POST /stt/v3/recognizeFileAsync`: JSON in camelCase or snake_case; needs
  `Authorization: Api-Key …` or `Bearer …`; answers an `Operation`
  (`{"id", "done": false, …}`). The audio is read from the `uri` (the S3
  server) when the operation is created; anything but OGG Opus makes the
  operation fail with `INVALID_ARGUMENT`, like the real service.
- `GET /operations/{id}`: `done: false` for `pending_polls` checks, then
  `done: true` with a `response` or an `error` (google.rpc.Status).
- `GET /stt/v3/getRecognition?operationId=`: one JSON object per line
  (`{"result": {...}}`), int64 values as strings; a `final` and a
  `finalRefinement.normalizedText` per utterance. Each channel of the audio
  is recognized on its own, as the real service does for multichannel
  audio: the channel count is read from the Opus header (`OpusHead`; a
  container's own header is what the service reads, `audioChannelCount`
  exists only for raw audio), every result carries its `channelTag`
  ("0", "1") and each channel counts its own `finalIndex`.
- Speaker labeling (`speakerLabeling.speakerLabeling: SPEAKER_LABELING_ENABLED`):
  offered for mono audio only, as the real one (a request for it on audio
  whose OpusHead counts two channels, or on a model in `labeling_refused_models`,
  answers 400 INVALID_ARGUMENT naming speaker labeling); the answer then tells
  its two speakers apart by `channelTag` "0" and "1" (the real one labels at
  most two).
- Errors are google.rpc.Status bodies with matching HTTP codes. Faults are
  scripted per route: `fail_next("operation", 503, 14)`; `fail_operations`
  makes the next operations end with an error; `empty_results` answers no
  utterances.
- Calls are recorded: `submits` (the bodies), `polls` (operation ids in order) and,
  with a `clock` (the service's fake clock's seconds), `poll_times` (id, time) to check
  the delays between checks of one operation; `after_submit` runs after each submit
  (a test advances the clock there, as an upload's time would).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from transcriber.testing.loopback import start_on_loopback

HTTP_CODES = {3: 400, 5: 404, 7: 403, 8: 429, 13: 500, 14: 503, 16: 401}


@dataclass(slots=True)
class FakeOperation:
    id: str
    uri: str
    language: list[str]
    polls: int = 0
    error: dict[str, Any] | None = None
    audio_bytes: int = 0
    channels: int = 1
    labeling: bool = False


@dataclass(slots=True)
class SpeechKitFault:
    status: int
    code: int
    message: str = "scripted fault"


def _status_body(code: int, message: str) -> bytes:
    return orjson.dumps({"code": code, "message": message, "details": [],
                         "error": {"code": code, "message": message, "details": []}})


async def _http_head(uri: str) -> bytes | None:
    try:
        async with aiohttp.ClientSession() as session, session.get(uri) as response:
            if response.status != 200:
                return None
            return await response.content.read(4096)
    except aiohttp.ClientError:
        return None


def _pick(data: dict[str, Any], camel: str, snake: str) -> Any:
    return data.get(camel, data.get(snake))


def opus_channels(head: bytes) -> int | None:
    """The channel count an Ogg Opus stream's identification header declares."""
    at = head.find(b"OpusHead")
    if at < 0 or len(head) < at + 10:
        return None
    return head[at + 9]


@dataclass
class FakeSpeechkit:
    api_key: str = "test-key"
    pending_polls: int = 1
    utterance_text: str = "fake speech"
    empty_results: bool = False
    operations: dict[str, FakeOperation] = field(default_factory=dict)
    submits: list[dict[str, Any]] = field(default_factory=list)
    polls: list[str] = field(default_factory=list)
    faults: dict[str, deque[SpeechKitFault]] = field(default_factory=dict)
    fail_operations: deque[int] = field(default_factory=deque)
    labeling_refused_models: set[str] = field(default_factory=set)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    # How the service reads the audio at `uri` (the real one uses its service account);
    # None: a plain HTTP GET. Answers the first bytes, or None when unreadable.
    read_object: Callable[[str], Awaitable[bytes | None]] | None = None
    clock: Callable[[], float] | None = None
    poll_times: list[tuple[str, float]] = field(default_factory=list)
    after_submit: Callable[[], None] | None = None
    _runner: web.AppRunner | None = None
    base_url: str = ""

    def fail_next(self, route: str, status: int, code: int, message: str = "fault") -> None:
        """`route` is `recognize`, `operation` or `results`."""
        self.faults.setdefault(route, deque()).append(SpeechKitFault(status, code, message))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/stt/v3/recognizeFileAsync", self._recognize)
        app.router.add_get("/operations/{id}", self._operation)
        app.router.add_get("/stt/v3/getRecognition", self._results)
        return app

    async def start(self) -> str:
        self._runner, self.base_url = await start_on_loopback(self.app())
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- routes -----------------------------------------------------------------

    def _refuse(self, request: web.Request, route: str) -> web.Response | None:
        auth = request.headers.get("Authorization", "")
        if auth not in (f"Api-Key {self.api_key}", f"Bearer {self.api_key}"):
            return web.Response(status=401, body=_status_body(16, "unauthenticated"),
                                content_type="application/json")
        queue = self.faults.get(route)
        if queue:
            fault = queue.popleft()
            return web.Response(status=fault.status, body=_status_body(fault.code, fault.message),
                                content_type="application/json")
        return None

    async def _recognize(self, request: web.Request) -> web.Response:
        refused = self._refuse(request, "recognize")
        if refused is not None:
            return refused
        body = await request.json(loads=orjson.loads)
        self.submits.append(body)
        uri = body.get("uri")
        model = _pick(body, "recognitionModel", "recognition_model") or {}
        audio_format = _pick(model, "audioFormat", "audio_format") or {}
        container = _pick(audio_format, "containerAudio", "container_audio") or {}
        container_type = _pick(container, "containerAudioType", "container_audio_type")
        restriction = _pick(model, "languageRestriction", "language_restriction") or {}
        labeling = _pick(_pick(body, "speakerLabeling", "speaker_labeling") or {},
                         "speakerLabeling", "speaker_labeling") == "SPEAKER_LABELING_ENABLED"
        unreadable = container_type not in ("OGG_OPUS", "MP3", None) and not _pick(
            audio_format, "rawAudio", "raw_audio")
        if not isinstance(uri, str) or unreadable:
            return web.Response(status=400, body=_status_body(3, "invalid request"),
                                content_type="application/json")
        operation = FakeOperation(id=f"e03op{next(self._ids):015d}", uri=uri,
                                  language=list(_pick(restriction, "languageCode",
                                                      "language_code") or []))
        head = await (self.read_object or _http_head)(uri)
        if labeling and (model.get("model") in self.labeling_refused_models
                         or (head is not None and opus_channels(head) not in (None, 1))):
            return web.Response(status=400, body=_status_body(
                3, "speaker labeling is only for mono-channel audio files and supported models"),
                content_type="application/json")
        operation.labeling = labeling
        operation.error, operation.channels = self._check_audio(head)
        if operation.error is None and self.fail_operations:
            code = self.fail_operations.popleft()
            operation.error = {"code": code, "message": "scripted failure", "details": []}
        self.operations[operation.id] = operation
        if self.after_submit is not None:
            self.after_submit()
        return web.json_response(self._operation_json(operation, done=False),
                                 dumps=lambda o: orjson.dumps(o).decode())

    @staticmethod
    def _check_audio(head: bytes | None) -> tuple[dict[str, Any] | None, int]:
        """The operation's error (None: readable Opus) and the audio's channel count."""
        if head is None:
            return {"code": 3, "message": "audio object is not readable", "details": []}, 1
        if not head.startswith(b"OggS") or b"OpusHead" not in head:
            return {"code": 3, "message": "audio is not OggOpus", "details": []}, 1
        return None, opus_channels(head) or 1

    def _operation_json(self, operation: FakeOperation, *, done: bool) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "id": operation.id, "description": "STT v3 async recognition",
            "createdAt": "2026-01-01T00:00:00Z", "createdBy": "ajefake",
            "modifiedAt": "2026-01-01T00:00:00Z", "done": done, "metadata": None,
        }
        if done and operation.error is not None:
            answer["error"] = operation.error
        elif done:
            answer["response"] = {"@type": "type.googleapis.com/google.protobuf.Empty"}
        return answer

    async def _operation(self, request: web.Request) -> web.Response:
        refused = self._refuse(request, "operation")
        if refused is not None:
            return refused
        operation = self.operations.get(request.match_info["id"])
        if operation is None:
            return web.Response(status=404, body=_status_body(5, "operation not found"),
                                content_type="application/json")
        self.polls.append(operation.id)
        if self.clock is not None:
            self.poll_times.append((operation.id, self.clock()))
        operation.polls += 1
        done = operation.polls > self.pending_polls
        return web.json_response(self._operation_json(operation, done=done),
                                 dumps=lambda o: orjson.dumps(o).decode())

    async def _results(self, request: web.Request) -> web.Response:
        refused = self._refuse(request, "results")
        if refused is not None:
            return refused
        operation = self.operations.get(request.query.get("operationId", ""))
        if operation is None or operation.polls <= self.pending_polls:
            return web.Response(status=404, body=_status_body(5, "results not ready"),
                                content_type="application/json")
        lines = [] if self.empty_results else self.result_lines(operation)
        body = b"\n".join(orjson.dumps(line) for line in lines)
        return web.Response(body=body, content_type="application/json")

    def result_lines(self, operation: FakeOperation) -> list[dict[str, Any]]:
        """Two utterances per channel: the raw `final` and its `finalRefinement` each.
        Channel 1 (of stereo audio) answers between channel 0's utterances, as the
        other side of a call does. With speaker labeling (mono audio) the second
        utterance is the other speaker's (`channelTag` "1")."""
        lines: list[dict[str, Any]] = []
        for channel in range(operation.channels):
            lines += self._channel_lines(operation, channel)
        return lines

    def _channel_lines(self, operation: FakeOperation, channel: int) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        spans = ((1000, 2500), (4000, 6000)) if channel == 0 else ((2700, 3800), (6200, 7500))
        for index, (start, end) in enumerate(spans):
            tag = str(index % 2) if operation.labeling else str(channel)
            text = f"{self.utterance_text} {operation.id[-3:]} {index}"
            if channel:
                text = f"{self.utterance_text} channel {channel} {operation.id[-3:]} {index}"
            alternative = {"words": [], "text": text.lower(), "startTimeMs": str(start),
                           "endTimeMs": str(end), "confidence": 0, "languages": []}
            cursors = {"receivedDataMs": str(end), "resetTimeMs": "0",
                       "partialTimeMs": str(end), "finalTimeMs": str(end),
                       "finalIndex": str(index), "eouTimeMs": "0"}
            lines.append({"result": {"sessionUuid": {"uuid": operation.id},
                                     "audioCursors": cursors, "responseWallTimeMs": "10",
                                     "final": {"alternatives": [alternative],
                                               "channelTag": tag},
                                     "channelTag": tag}})
            refined = {**alternative, "text": text}
            lines.append({"result": {"sessionUuid": {"uuid": operation.id},
                                     "audioCursors": cursors, "responseWallTimeMs": "12",
                                     "finalRefinement": {
                                         "finalIndex": str(index),
                                         "normalizedText": {"alternatives": [refined],
                                                            "channelTag": tag}},
                                     "channelTag": tag}})
        return lines
