"""`POST /app/audiorecords`: a streaming upload becomes a record.

Two ways in: `multipart/form-data` with the file in the field `file` (what a
browser form sends), or the raw body with the name in `X-Filename`
(percent-encoded UTF-8 allowed; what `curl --data-binary` sends). The body
is never held in memory: it streams through `intake.accept_stream` into the
record folder, while `uploadguard` bounds how many arrive at once and how
slowly a body may come. A declared length above the limit, and a body (or a
form part) in a content coding, are refused before anything is read, even
before `100 Continue`.

`100 Continue` itself comes last (`uploadguard.expect_handler`): after the
host, origin, rate limit, identity and upload-slot checks and the head's own
(size, coding, room). A client that is refused any of them learns nothing
from the head it sent: no binary search of the free disk space on 413/507
without an identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from urllib.parse import unquote

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from transcriber.core.errors import (
    IncompleteInput,
    PermanentFailure,
    QuotaExceeded,
    StorageFull,
    TooLarge,
    TransientFailure,
)
from transcriber.db import reads
from transcriber.db.commands.records import Accepted, Via
from transcriber.domain.shapes import RecordBody
from transcriber.followups.card import record_summary
from transcriber.pipeline.intake import (
    AudioLimits,
    AudioRefused,
    EmptyInput,
    Intake,
    accept_stream,
)
from transcriber.web import keys
from transcriber.web.access import upload_space
from transcriber.web.archive import record_progress
from transcriber.web.bearer import BEARER
from transcriber.web.errors import ApiError
from transcriber.web.identity import current_user
from transcriber.web.language import check_language, default_language
from transcriber.web.operations import BINARY, LANGUAGE, RECORD_LINKS, declare, ok
from transcriber.web.responses import json_response
from transcriber.web.uploadguard import (
    UPLOAD_SLOTS,
    BodyTooSlow,
    guarded_body,
    refuse_coded,
    too_slow,
)

CHUNK_BYTES = 256 * 1024
# Room for the boundaries and part headers around the file in a multipart body.
MULTIPART_SLACK = 64 * 1024
FIELD_MAX = 64 * 1024
FILE_FIELD = "file"
LANGUAGE_FIELD = "language"
SPACE_FIELD = "space"
SPEAKERS_FIELD = "speakers"
SPEAKERS_RANGE = range(1, 9)


class MalformedUpload(IncompleteInput):
    """The multipart body cannot be parsed."""


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"the file is larger than {limit} bytes",
                    close=True)


def _refused(exc: AudioRefused, limits: AudioLimits) -> ApiError:
    if exc.refusal == "too_long":
        return ApiError(413, "too_long", f"the recording is longer than "
                        f"{limits.max_seconds} s, the longest accepted")
    if exc.refusal == "sample_rate_too_high":
        return ApiError(415, "sample_rate_too_high", f"the audio is sampled above "
                        f"{limits.max_sample_rate} Hz, the fastest accepted")
    if exc.refusal == "too_many_channels":
        return ApiError(415, "too_many_channels", f"the audio has more than "
                        f"{limits.max_channels} channels, the most accepted")
    return ApiError(415, "sample_rate_too_low",
                    "the audio is sampled below 8 kHz, too coarse to carry speech")


def _quota_exceeded(exc: QuotaExceeded) -> ApiError:
    # No Retry-After: room comes back when records finish, not after a known time.
    return ApiError(429, "quota_exceeded", (
        f"your recordings still waiting to be transcribed hold {_hours(exc.queued_ms)} "
        f"of audio; with this one they would pass the limit of {_hours(exc.limit_ms)} "
        "per person; nothing was stored: send it again when some are done"))


def _hours(ms: int) -> str:
    minutes = ms // 60_000
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _storage_full() -> ApiError:
    return ApiError(507, "insufficient_storage",
                    "the server has no room for this file now; nothing was stored",
                    close=True, headers={"Retry-After": "300"})


def _declared_too_large(request: web.Request, limit: int) -> bool:
    length = request.content_length
    if length is None:
        return False
    slack = MULTIPART_SLACK if request.content_type.startswith("multipart/") else 0
    return length > limit + slack


def check_before_the_body(request: web.Request) -> None:
    """What the head alone tells: the coding, the declared size, the room for it."""
    limit = request.app[keys.SETTINGS].server.upload_max_bytes
    refuse_coded(request.headers)
    if _declared_too_large(request, limit):
        raise _too_large(limit)
    try:
        request.app[keys.FILES].check_room(request.content_length)
    except StorageFull:
        raise _storage_full() from None


async def part_chunks(part: BodyPartReader) -> AsyncIterator[bytes]:
    while True:
        try:
            chunk = await part.read_chunk(CHUNK_BYTES)
        except (ValueError, HttpProcessingError) as exc:
            raise MalformedUpload("malformed multipart body") from exc
        if not chunk:
            return
        yield chunk


async def read_field(part: BodyPartReader, *, keep: bool = True) -> bytes:
    """A form field before the file, at most FIELD_MAX bytes (kept or only counted)."""
    content = bytearray()
    size = 0
    async for chunk in part_chunks(part):
        size += len(chunk)
        if size > FIELD_MAX:
            raise ApiError(400, "bad_request", "form fields other than the file are too large",
                           close=True)
        if keep:
            content += chunk
    return bytes(content)


async def _skip_field(part: BodyPartReader) -> None:
    await read_field(part, keep=False)


def _language(request: web.Request, value: str | None) -> str | None:
    try:
        return check_language(request.app, value)
    except ApiError as exc:
        exc.close = True  # the body is not read any further
        raise


def _speakers(value: str | None) -> int | None:
    """The `speakers` field (1-8); absent or empty: found by listening."""
    if value is None or not value.strip():
        return None
    try:
        count = int(value.strip())
    except ValueError:
        count = 0
    if count not in SPEAKERS_RANGE:
        raise ApiError(400, "bad_request", "speakers must be a whole number from 1 to 8",
                       close=True)
    return count


async def _multipart_file(
    request: web.Request,
) -> tuple[BodyPartReader, str | None, str | None, str | None]:
    """The file's part, and the `language`, `speakers` and `space` fields that came
    before it."""
    language: str | None = None
    speakers: str | None = None
    space: str | None = None
    try:
        reader = await request.multipart()
        while True:
            part = await reader.next()
            if part is None:
                break
            if not isinstance(part, BodyPartReader):
                raise MalformedUpload("nested multipart body")
            refuse_coded(part.headers)
            if part.name == FILE_FIELD:
                return part, language, speakers, space
            if part.name == LANGUAGE_FIELD:
                language = (await read_field(part)).decode("utf-8", errors="replace")
                continue
            if part.name == SPEAKERS_FIELD:
                speakers = (await read_field(part)).decode("utf-8", errors="replace")
                continue
            if part.name == SPACE_FIELD:
                space = (await read_field(part)).decode("utf-8", errors="replace")
                continue
            await _skip_field(part)
    except (ValueError, AssertionError, HttpProcessingError, MalformedUpload) as exc:
        raise ApiError(400, "bad_request", "the multipart body is malformed",
                       close=True) from exc
    raise ApiError(400, "bad_request", f"the form has no field named {FILE_FIELD!r}",
                   close=True)


_SPEAKERS = {
    "name": "speakers", "in": "query", "required": False,
    "schema": {"type": "integer", "minimum": 1, "maximum": 8},
    "description": "How many people speak (1: speakers are not told apart); absent: "
                   "found by listening",
}
_SPACE = {
    "name": "space", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "The space the record goes into (an editor or admin there); absent: "
                   "the user's default space; empty: none (docs/sharing.md)",
}
_FORM = {
    "type": "object", "required": ["file"],
    "properties": {
        "language": {"type": "string", "description": "As the `language` parameter; before "
                                                      "the file"},
        "speakers": {"type": "string", "pattern": "^[1-8]$",
                     "description": "As the `speakers` parameter; before the file"},
        "space": {"type": "string", "description": "As the `space` parameter; before the file"},
        "file": BINARY},
}


@declare("uploadRecord", "Upload a recording (streamed, at most the configured size)", {
    201: ok("The new record", RecordBody, links=RECORD_LINKS),
    400: "Malformed, empty or incomplete upload, an unknown language, or speakers outside 1-8",
    403: "Cross-site request, a read token, or a space where the user's role files no records",
    404: "A space that is not one of the user's",
    408: "The body stalled or came too slowly",
    413: "Larger than the limit, or longer than server.record_max_seconds",
    415: "Not readable audio, sampled below 8 kHz or above server.max_sample_rate, with more "
         "channels than server.max_channels, or a compressed body or form part",
    429: "Rate limited, or too many uploads at once by this user (see Retry-After), or "
         "quota_exceeded: this user's queued audio would pass "
         "server.queued_audio_max_seconds_per_user",
    503: "The file could not be examined now, or too many uploads at once (see Retry-After)",
    507: "No room on the server's disk for the file (its declared size plus "
         "storage.min_free_bytes); nothing was stored",
}, parameters=(LANGUAGE, _SPEAKERS, _SPACE, {
    "name": "X-Filename", "in": "header", "required": False, "schema": {"type": "string"},
    "description": "The file's name for a raw body (percent-encoded UTF-8 allowed)"}),
    body={"required": True, "content": {"multipart/form-data": {"schema": _FORM},
                                        "application/octet-stream": {"schema": BINARY}}})
async def upload(request: web.Request) -> web.Response:
    check_before_the_body(request)
    owner = current_user(request)
    try:
        async with guarded_body(request, request.app[UPLOAD_SLOTS], owner.id):
            return await _receive(request, owner.id)
    except BodyTooSlow:
        raise too_slow("upload_too_slow", "upload") from None


# What `transcriber upload` says it is (cli/upload.py), so its records show it.
CLI_USER_AGENT = "transcriber-cli/"


def arrived_via(*, bearer: bool, user_agent: str, browser: bool) -> Via:
    """Pure: how an upload came in, for the card's "From": the command-line client
    (`transcriber upload` names itself), another client of the API (a bearer token, or
    a request no browser sent: no `Origin` nor `Sec-Fetch-Site`, as `curl`), else
    the web app."""
    if user_agent.startswith(CLI_USER_AGENT):
        return "cli"
    if bearer or not browser:
        return "api"
    return "web"


def request_via(request: web.Request) -> Via:
    headers = request.headers
    return arrived_via(bearer=BEARER in request, user_agent=headers.get("User-Agent", ""),
                       browser="Origin" in headers or "Sec-Fetch-Site" in headers)


async def store(request: web.Request, intake: Intake, chunks: AsyncIterator[bytes], *,
                expected_size: int | None = None,
                late: Callable[[Intake], Intake] | None = None) -> Accepted:
    """`intake.accept_stream` with its refusals as the API's errors (every door that
    takes a file: this upload and OpenAI's)."""
    server = request.app[keys.SETTINGS].server
    limit = server.upload_max_bytes
    if intake.via is None:
        intake = dataclasses.replace(intake, via=request_via(request))
    try:
        return await accept_stream(
            intake, chunks, files=request.app[keys.FILES], writer=request.app[keys.WRITER],
            transcoder=request.app[keys.TRANSCODER], limit=limit,
            limits=AudioLimits.of(server), expected_size=expected_size, late=late,
        )
    except BodyTooSlow:
        raise
    except TooLarge:
        raise _too_large(limit) from None
    # A client gone mid-body (ConnectionResetError) is the error middleware's 499.
    except (IncompleteInput, HttpProcessingError):
        raise ApiError(400, "incomplete_upload",
                       "the upload ended before the whole file arrived", close=True) from None
    except EmptyInput:
        raise ApiError(400, "empty_file", "the file is empty") from None
    except AudioRefused as exc:
        raise _refused(exc, AudioLimits.of(server)) from None
    except QuotaExceeded as exc:
        raise _quota_exceeded(exc) from None
    except StorageFull:
        raise _storage_full() from None
    except PermanentFailure:
        raise ApiError(415, "not_audio",
                       "the file is not audio that can be read (no audio stream found)"
                       ) from None
    except TransientFailure:
        raise ApiError(503, "unavailable", "the file could not be examined now; try again",
                       headers={"Retry-After": "30"}) from None


async def _receive(request: web.Request, owner_id: str) -> web.Response:
    expected: int | None = None
    language = _language(request, request.query.get("language"))
    speakers = _speakers(request.query.get(SPEAKERS_FIELD))
    space = await upload_space(request, request.query.get(SPACE_FIELD))
    if request.content_type == "multipart/form-data":
        part, field, speakers_field, space_field = await _multipart_file(request)
        if field is not None:
            language = _language(request, field)
        if speakers_field is not None:
            speakers = _speakers(speakers_field)
        if space_field is not None:
            space = await upload_space(request, space_field)
        # Browsers escape only quotes and line breaks; other clients
        # (aiohttp, some libraries) percent-encode the whole name.
        name = unquote(part.filename or "", errors="replace")
        chunks: AsyncIterator[bytes] = part_chunks(part)
    elif request.content_type.startswith("multipart/"):
        raise ApiError(415, "unsupported_media_type",
                       "send multipart/form-data or the raw file", close=True)
    else:
        name = unquote(request.headers.get("X-Filename", ""), errors="replace")
        chunks = request.content.iter_chunked(CHUNK_BYTES)
        expected = request.content_length
    accepted = await store(request, Intake(
        owner_id=owner_id, original_name=name,
        language=language or default_language(request.app), speakers=speakers,
        space_id=space,
    ), chunks, expected_size=expected)
    record = await reads.records.card(request.app[keys.READERS], record_id=accepted.record_id,
                                      owner_id=owner_id)
    if record is None:  # pragma: no cover - the writer has just committed it
        raise ApiError(500, "internal", "internal error")
    progress = await record_progress(request.app, record)
    return json_response(record_summary(record, progress=progress), status=201,
                         headers={"Location": f"/app/audiorecords/{accepted.record_id}"})
