"""OpenAI's `POST /v1/audio/translations`: speech in any language the recognizer takes,
answered as English text (Whisper's translate task).

The same form as `/v1/audio/transcriptions` (`file`, `model`, `prompt`,
`response_format`, `temperature`; `language` names the spoken one, optional), the
same bearer `write` token and the same cap on requests under way (`openai_api.WAITS`).
A translation is not a record: the archive keeps transcripts in the language spoken,
so the file is held in a temporary folder while it is translated and removed after,
and at most `MAX_BYTES` (OpenAI's own limit, 25 MB) are taken. It is answered within
`server.openai_wait_seconds` or refused with 504 (the translation is stopped). A
recognizer without the translate task (one that is not `Translates`: SpeechKit)
answers 400 `translation_unsupported` in OpenAI's error shape, before the body is read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from pathlib import Path

import structlog
from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.core.observability import OPENAI_TRANSLATIONS
from transcriber.ports import Translates
from transcriber.web import keys
from transcriber.web.errors import ApiError
from transcriber.web.language import check_language
from transcriber.web.openai_api import FIELDS_MAX, WAITS, token_owner
from transcriber.web.openai_shapes import (
    Transcribed,
    TranscriptionRequest,
    invalid,
    parse_form,
    transcription_body,
)
from transcriber.web.openapi_integrations import TRANSCRIPTION_FORM
from transcriber.web.operations import JSON, declare, media, ref
from transcriber.web.responses import json_response
from transcriber.web.upload import FILE_FIELD, check_before_the_body, part_chunks, read_field
from transcriber.web.uploadguard import UPLOAD_SLOTS, BodyTooSlow, guarded_body, too_slow

log = structlog.get_logger(__name__)

# OpenAI's limit for an audio file; a translation is held whole, outside the archive.
MAX_BYTES = 25 * 1024 * 1024


def _translator(app: web.Application) -> Translates:
    found = app.get(keys.RECOGNIZER)
    # Looked at as any object: mypy takes every `Recognizer` for a `Translates`.
    recognizer: object = found
    if not isinstance(recognizer, Translates):
        raise ApiError(400, "translation_unsupported",
                       "this service's recognizer cannot translate speech; only the local "
                       "(Whisper) recognizer has a translate task", param="model")
    return recognizer


async def _receive(request: web.Request, folder: Path) -> tuple[Path, TranscriptionRequest]:
    """The form's file written into `folder` and its fields parsed."""
    if request.content_type != "multipart/form-data":
        raise invalid("send multipart/form-data with the audio in the field file", FILE_FIELD,
                      close=True)
    fields: dict[str, list[str]] = {}
    target: Path | None = None
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise ApiError(400, "bad_request", "nested multipart bodies are not read",
                               close=True)
            if part.name == FILE_FIELD:
                if target is not None:
                    raise invalid("send one file per request", FILE_FIELD, close=True)
                target = folder / "audio"
                size = 0
                with target.open("wb") as out:
                    async for chunk in part_chunks(part):
                        size += len(chunk)
                        if size > MAX_BYTES:
                            raise ApiError(413, "too_large", "a file to translate is at most "
                                           f"{MAX_BYTES // 2**20} MB", param=FILE_FIELD,
                                           close=True)
                        out.write(chunk)
                continue
            if sum(len(v) for v in fields.values()) >= FIELDS_MAX:
                raise invalid("the form has too many fields", "file", close=True)
            value = (await read_field(part)).decode("utf-8", errors="replace")
            fields.setdefault(part.name or "", []).append(value)
    except (ValueError, AssertionError, HttpProcessingError) as exc:
        raise ApiError(400, "bad_request", "the multipart body is malformed",
                       close=True) from exc
    if target is None or target.stat().st_size == 0:
        raise invalid("the form has no file (or an empty one) in the field file", FILE_FIELD,
                      close=True)
    parsed = parse_form(fields)
    if parsed.stream:
        raise invalid("stream=true is for transcriptions; a translation comes whole", "stream",
                      close=True)
    try:
        language = check_language(request.app, parsed.language)
    except ApiError as exc:
        raise invalid(exc.message, "language", close=True) from None
    return target, dataclasses.replace(parsed, language=None if language == "auto" else language)


@declare("createTranslation", "OpenAI's speech-to-English (Whisper's translate task): not "
                              "stored as a record; at most 25 MB", {
    200: media("The English text in response_format", {
        JSON: {"schema": {"anyOf": [ref("Transcription"), ref("TranscriptionVerbose")]}},
        "text/plain": {"schema": {"type": "string"}}}),
    400: "A malformed form, no file, an unknown language or response_format; "
         "translation_unsupported: the configured recognizer has no translate task",
    403: "A read token",
    408: "The body stalled or came too slowly",
    413: "Larger than 25 MB",
    415: "Not readable audio, or a compressed body or form part",
    429: "Rate limited, or too many requests under way (see Retry-After)",
    503: "The translation failed now, or too many uploads at once (see Retry-After)",
    504: "Not translated within server.openai_wait_seconds",
}, body={"required": True, "content": {"multipart/form-data": {"schema": TRANSCRIPTION_FORM}}})
async def translations(request: web.Request) -> web.StreamResponse:
    owner = token_owner(request)
    translator = _translator(request.app)
    check_before_the_body(request)
    async with request.app[WAITS].hold(owner.id):
        with tempfile.TemporaryDirectory(prefix="transcriber-translation-") as folder:
            try:
                async with guarded_body(request, request.app[UPLOAD_SLOTS], owner.id):
                    path, wanted = await _receive(request, Path(folder))
            except BodyTooSlow:
                raise too_slow("upload_too_slow", "upload") from None
            seconds = request.app[keys.SETTINGS].server.openai_wait_seconds
            try:
                async with asyncio.timeout(seconds):
                    answer = await translator.translate(path, language=wanted.language)
            except TimeoutError:
                OPENAI_TRANSLATIONS.labels("timed_out").inc()
                raise ApiError(504, "timeout", f"the translation took longer than "
                                               f"{seconds:g} s") from None
            except PermanentFailure:
                OPENAI_TRANSLATIONS.labels("not_audio").inc()
                raise ApiError(415, "unsupported_media", "the file is not readable audio",
                               param=FILE_FIELD) from None
            except TransientFailure:
                OPENAI_TRANSLATIONS.labels("failed").inc()
                raise ApiError(503, "unavailable", "the translation failed; try again",
                               headers={"Retry-After": "30"}) from None
    OPENAI_TRANSLATIONS.labels("done").inc()
    end_ms = max((u.end_ms for u in answer.utterances), default=0)
    done = Transcribed(utterances=answer.utterances, speaker_names={}, language="en",
                       duration_ms=end_ms)
    log.info("openai_translation", utterances=len(answer.utterances),
             spoken=answer.language)
    content_type, body = transcription_body(done, wanted)
    if not isinstance(body, str):
        return json_response(body)
    return web.Response(text=body, content_type=content_type, charset="utf-8")
