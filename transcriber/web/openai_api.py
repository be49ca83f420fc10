"""OpenAI's speech-to-text API under `/v1/`: the clients people already have use the archive.

`POST /v1/audio/transcriptions` takes OpenAI's multipart form (`file`,
`model`, `language`, `prompt`, `response_format`, `timestamp_granularities[]`)
with a bearer `write` token. The file becomes an ordinary record of the
token's owner through the upload's own intake (`upload.store`: every limit,
quota and refusal of `POST /app/audiorecords`), then the request waits until
the record is done, at most `server.openai_wait_seconds` (`openai_wait`), or
with `stream=true` sends its text as it is recognized (`openai_stream`). Past the
wait: 504 with the record
id, which goes on and can be fetched from `/app/` later. Each waiting request
holds a socket and reads the database now and then, so at most
`server.openai_waits_per_user_max` wait at once for one person (429 with
`Retry-After` past it) and `server.openai_waits_max` in all (429 `busy`), refused
before the body; and the token is read again at each look, so a token revoked
(or expired) while its request waits ends the wait with 401, not the answer. The answer takes
OpenAI's shapes (`openai_shapes`), errors OpenAI's error shape
(`errors.answer_for`). `GET /v1/models` names the recognizer that answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from urllib.parse import unquote

import structlog
from aiohttp import BodyPartReader, MultipartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from transcriber.core.observability import OPENAI_TRANSCRIPTIONS
from transcriber.db import reads
from transcriber.db.commands.users import User
from transcriber.domain.shapes_integrations import ModelBody, ModelListBody
from transcriber.pipeline.intake import Intake
from transcriber.providers.recognizers import model_names
from transcriber.web import keys
from transcriber.web.access import file_into_space, upload_space
from transcriber.web.archive import current_utterances
from transcriber.web.bearer import BEARER, CHALLENGE
from transcriber.web.errors import ApiError
from transcriber.web.language import active_provider, check_language, default_language
from transcriber.web.openai_shapes import (
    Transcribed,
    TranscriptionRequest,
    invalid,
    model_entry,
    parse_form,
    transcription_body,
)
from transcriber.web.openai_stream import stream_answer
from transcriber.web.openai_wait import (
    NO_RETRY,
    client_gone,
    outcome,
    token_valid,
    wait_settled,
)
from transcriber.web.openapi_integrations import TRANSCRIPTION_FORM
from transcriber.web.operations import JSON, declare, media, ok, path_param, ref
from transcriber.web.responses import json_response
from transcriber.web.upload import (
    FILE_FIELD,
    check_before_the_body,
    part_chunks,
    read_field,
    store,
)
from transcriber.web.uploadguard import (
    UPLOAD_SLOTS,
    BodySlots,
    BodyTooSlow,
    guarded_body,
    too_slow,
)

log = structlog.get_logger(__name__)

# At most this many form fields besides the file (OpenAI's clients send a handful).
FIELDS_MAX = 32
# When the models list says the model was made: when this process started.
STARTED = web.AppKey("openai_started", int)
# The transcription requests under way (uploading or waiting), in all and per person.
WAITS = web.AppKey("openai_waits", BodySlots)


def token_owner(request: web.Request) -> User:
    """The bearer token's owner; `/v1/` knows no other identity."""
    if BEARER not in request:
        raise ApiError(401, "unauthorized", "no API key: send Authorization: Bearer tx_… "
                                            "(a token from transcriber token create)")
    return request[BEARER].user


@dataclasses.dataclass(slots=True)
class _Form:
    """The fields as they arrive (before and after the file) and the request they make."""

    fields: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    parsed: TranscriptionRequest | None = None

    def applied(self, intake: Intake) -> Intake:
        """The intake with the form's language (known once the whole form is read)."""
        assert self.parsed is not None  # set when the file's chunks ended
        if self.parsed.language is None:
            return intake
        return dataclasses.replace(intake, language=self.parsed.language)

    async def read(self, part: BodyPartReader) -> None:
        if sum(len(v) for v in self.fields.values()) >= FIELDS_MAX:
            raise invalid("the form has too many fields", "file", close=True)
        value = (await read_field(part)).decode("utf-8", errors="replace")
        self.fields.setdefault(part.name or "", []).append(value)


async def _next_part(reader: MultipartReader) -> BodyPartReader | None:
    try:
        part = await reader.next()
    except (ValueError, AssertionError, HttpProcessingError) as exc:
        raise ApiError(400, "bad_request", "the multipart body is malformed",
                       close=True) from exc
    if part is not None and not isinstance(part, BodyPartReader):
        raise ApiError(400, "bad_request", "nested multipart bodies are not read", close=True)
    return part


async def _file_then_fields(request: web.Request, part: BodyPartReader,
                            reader: MultipartReader, form: _Form) -> AsyncIterator[bytes]:
    """The file's bytes, then the fields after it, checked before the stream ends (a
    refusal then leaves nothing stored: intake removes the file)."""
    async for chunk in part_chunks(part):
        yield chunk
    while (later := await _next_part(reader)) is not None:
        if later.name == FILE_FIELD:
            raise invalid("send one file per request", FILE_FIELD, close=True)
        await form.read(later)
    form.parsed = _checked(request, parse_form(form.fields))


def _checked(request: web.Request, parsed: TranscriptionRequest) -> TranscriptionRequest:
    try:
        language = check_language(request.app, parsed.language)
    except ApiError as exc:
        raise invalid(exc.message, "language", close=True) from None
    return dataclasses.replace(parsed, language=language)


async def _receive(request: web.Request, owner: User) -> tuple[str, TranscriptionRequest]:
    """Store the form's file as the owner's record; its id and the form's request."""
    if request.content_type != "multipart/form-data":
        raise invalid("send multipart/form-data with the audio in the field file", FILE_FIELD,
                      close=True)
    form = _Form()
    try:
        reader = await request.multipart()
    except (ValueError, AssertionError, HttpProcessingError) as exc:
        raise ApiError(400, "bad_request", "the multipart body is malformed",
                       close=True) from exc
    while (part := await _next_part(reader)) is not None:
        if part.name != FILE_FIELD:
            await form.read(part)
            continue
        _checked(request, parse_form(form.fields))  # what came before: refused before storing
        # The person's default space, if they have one (no field: OpenAI's form has none).
        space = await upload_space(request, None, person=owner.id)
        accepted = await store(
            request, Intake(owner_id=owner.id, original_name=unquote(
                part.filename or "", errors="replace"), language=default_language(request.app)),
            _file_then_fields(request, part, reader, form), late=form.applied)
        assert form.parsed is not None
        await file_into_space(request, accepted.record_id, space, person=owner.id)
        return accepted.record_id, form.parsed
    raise invalid("the form has no field named file", FILE_FIELD, close=True)



@declare("createTranscription", "OpenAI's speech-to-text: the file becomes a record of the "
                                "token's owner; answers once it is done", {
    200: media("The transcript in response_format (stream=true: server-sent events)", {
        JSON: {"schema": {"anyOf": [ref("Transcription"), ref("TranscriptionVerbose"),
                                    ref("TranscriptionDiarized")]}},
        "text/plain": {"schema": {"type": "string"}},
        # One server-sent event: `data` holds its JSON (transcript.text.delta,
        # transcript.text.done or error).
        "text/event-stream": {"schema": {
            "type": "object", "required": ["data"],
            "properties": {"data": {"type": "string", "contentMediaType": "application/json"},
                           "event": {"type": "string"}}}}}),
    400: "A malformed form, no file, an unknown language or response_format, an empty or "
         "incomplete file",
    403: "A read token",
    408: "The body stalled or came too slowly",
    413: "Larger than server.upload_max_bytes, or longer than server.record_max_seconds",
    415: "Not readable audio (or refused as the upload refuses it), or a compressed body or "
         "form part",
    429: "Rate limited, or too many transcription requests under way, this person's "
         "(too_many_transcriptions: server.openai_waits_per_user_max) or everybody's (busy: "
         "server.openai_waits_max); see Retry-After",
    500: "The record halted (record_id: it is kept)",
    503: "The file could not be examined now, or too many uploads at once (see Retry-After)",
    504: "Not done within server.openai_wait_seconds; record_id names the record, which "
         "goes on",
    507: "No room on the server's disk for the file",
}, body={"required": True, "content": {"multipart/form-data": {"schema": TRANSCRIPTION_FORM}}})
async def transcriptions(request: web.Request) -> web.StreamResponse:
    # The wait is counted from the request's arrival, not from the end of its upload:
    # OpenAI's SDK gives up (and sends the file again) 600 s after its last byte, so
    # the 504 with the record's id must come before that, whatever the upload took.
    arrived = request.app[keys.CLOCK].monotonic()
    owner = token_owner(request)
    async with request.app[WAITS].hold(owner.id):
        return await _transcribe(request, owner, arrived)


async def _transcribe(request: web.Request, owner: User, arrived: float) -> web.StreamResponse:
    check_before_the_body(request)
    try:
        async with guarded_body(request, request.app[UPLOAD_SLOTS], owner.id):
            record_id, wanted = await _receive(request, owner)
    except BodyTooSlow:
        raise too_slow("upload_too_slow", "upload") from None
    seconds = request.app[keys.SETTINGS].server.openai_wait_seconds
    if wanted.stream:
        return await stream_answer(request, record_id, arrived=arrived, seconds=seconds)
    waited = await wait_settled(request.app, record_id, seconds=seconds,
                                gone=client_gone(request), since=arrived,
                                allowed=token_valid(request))
    ended = outcome(waited)
    OPENAI_TRANSCRIPTIONS.labels(ended).inc()
    log.info("openai_transcription", record_id=record_id, outcome=ended)
    if waited == "timed_out":
        raise ApiError(504, "timeout", (
            f"the recording is not transcribed after {seconds:g} s; it goes on as record "
            f"{record_id}: fetch it later from /app/audiorecords/{record_id}/transcript"),
            headers=NO_RETRY, details={"record_id": record_id})
    if waited == "deleted":
        raise ApiError(404, "not_found", "the record was deleted before it was transcribed")
    if waited == "client_gone":
        return web.Response(status=499)  # nobody reads it; the record goes on
    if waited == "revoked":
        # Nothing of the record for whoever holds a revoked token: the owner finds it
        # in the archive, where it goes on.
        raise ApiError(401, "unauthorized", "the API key was revoked (or expired) while the "
                                            "request waited", headers=CHALLENGE)
    if waited.halted_at is not None:
        raise ApiError(500, "transcription_failed", (
            f"the recording could not be transcribed ({waited.halt_reason}); it is kept as "
            f"record {record_id}"), headers=NO_RETRY, details={"record_id": record_id})
    return await _answer(request, record_id, owner, wanted)


async def _answer(request: web.Request, record_id: str, owner: User,
                  wanted: TranscriptionRequest) -> web.Response:
    record = await reads.records.card(request.app[keys.READERS], record_id=record_id,
                                      owner_id=owner.id)
    utterances = await current_utterances(request, record_id)
    if record is None or utterances is None:
        raise ApiError(404, "not_found", "the record was deleted before it was transcribed")
    requested = record.language if record.language != "auto" else None
    done = Transcribed(utterances=utterances, speaker_names=record.speaker_names,
                       language=record.detected_language or requested,
                       duration_ms=record.duration_ms,
                       quality=None if record.quality is None else record.quality.as_dict())
    # Cutting subtitle cues takes ~0.25 s an hour of speech (docs/recognition.md): a thread.
    content_type, body = await asyncio.to_thread(transcription_body, done, wanted)
    headers = {"X-Transcriber-Record": record_id}
    if not isinstance(body, str):
        return json_response(body, headers=headers)
    return web.Response(text=body, content_type=content_type, charset="utf-8", headers=headers)


def _model(app: web.Application) -> ModelBody:
    recognizer = app.get(keys.RECOGNIZER)
    provider = active_provider(app)
    return model_entry(recognizer.model if recognizer is not None else provider,
                       created=app[STARTED], owned_by=f"transcriber-{provider}")


def _models(app: web.Application) -> list[ModelBody]:
    """The recognizer that answers, then the models folder's other models (each may be
    named by a re-transcription; `recognizer.routes` gives each its languages)."""
    active = _model(app)
    others = [model_entry(name, created=app[STARTED], owned_by="transcriber-models-dir")
              # The first name is the configured recognizer's own: `active` already.
              for name in model_names(app[keys.SETTINGS])[1:] if name != active.id]
    return [active, *others]


@declare("listModels", "The recognizer that answers and the models folder's models",
         {200: ok("The models", ModelListBody)})
async def list_models(request: web.Request) -> web.Response:
    token_owner(request)
    return json_response(ModelListBody(object="list", data=_models(request.app)))


@declare("getModel", "The recognizer, by its id", {200: ok("The model", ModelBody)},
         parameters=(path_param("model"),))
async def get_model(request: web.Request) -> web.Response:
    token_owner(request)
    for model in _models(request.app):
        if request.match_info["model"] == model.id:
            return json_response(model)
    raise ApiError(404, "model_not_found", "no such model; GET /v1/models lists the ones "
                                           "this service has (any name is accepted by "
                                           "/v1/audio/transcriptions)", param="model")


def setup_openai(app: web.Application) -> None:
    app[STARTED] = int(app[keys.CLOCK].now().timestamp())
    server = app[keys.SETTINGS].server
    app[WAITS] = BodySlots(total=server.openai_waits_max,
                           per_user=server.openai_waits_per_user_max, what="transcriptions",
                           full_status=429)
