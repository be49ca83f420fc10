"""Resumable uploads: tus 1.0 at `/app/uploads/` (docs/api.md, "Resumable uploads").

`POST` declares a length and metadata (`filename`, optional `language` and
`space`) and answers 201 with the upload's `Location`; `HEAD` tells the stored
offset; `PATCH` (`application/offset+octet-stream`) appends at exactly that
offset; `DELETE` ends it. The last `PATCH` hands the complete file to the same
intake as the one-shot upload (`upload.store`: the size limit, the probe, the
audio limits, the quota), and its answer (and `HEAD`'s) carries the record's
id in `X-Record-Id`. The host, origin, rate limit and identity middlewares see
these routes like any other under `/app/`; a `PATCH` body is received under the
one-shot upload's slots and pace watch (`uploadguard.guarded_body`), so no
second door has weaker rules.

The `space` metadata is decided as the one-shot upload's `space` field
(`access.upload_space`): absent, the person's default space; empty, none; a
space the uploader may not add records to is refused at `POST` (404, 403),
before a byte is sent. The record is filed there in its own transaction when
the last byte arrives, if the uploader still may (a member removed meanwhile
gets a record of their own, logged as `upload_space_refused`).

The bytes of a `PATCH` and their durability are `web.upload_bytes`'.
"""

from __future__ import annotations

from dataclasses import replace

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from transcriber.core.clock import parse_time, stamp
from transcriber.core.errors import Conflict, StorageFull
from transcriber.core.ids import new_unguessable_id, parse_id
from transcriber.core.observability import RESUMABLE_UPLOADS
from transcriber.db import reads
from transcriber.db.commands.uploads import (
    CreateUpload,
    DeleteUpload,
    SetUploadLength,
)
from transcriber.db.reads.uploads import Upload
from transcriber.domain.uploads import (
    CHECKSUM_ALGORITHMS,
    EXTENSIONS,
    FILENAME_MAX_CHARS,
    OFFSET_CONTENT_TYPE,
    TUS_VERSION,
    Checksum,
    UploadHeaderError,
    http_date,
    parse_checksum,
    parse_count,
    parse_metadata,
)
from transcriber.pipeline.intake import Intake
from transcriber.web import keys
from transcriber.web.access import may_file_into, upload_space
from transcriber.web.errors import ApiError
from transcriber.web.identity import current_user
from transcriber.web.language import check_language, default_language
from transcriber.web.openapi_uploads import (
    CREATE_HEADERS,
    PATCH_ANSWERS,
    PATCH_BODY,
    PATCH_HEADERS,
    STATE,
    UPLOAD_ID,
    VERSION,
    VERSION_ERROR,
)
from transcriber.web.operations import declare, empty
from transcriber.web.partials import PARTIALS, Partials
from transcriber.web.upload import store
from transcriber.web.upload_bytes import receive, ttl
from transcriber.web.uploadguard import (
    UPLOAD_SLOTS,
    BodyTooSlow,
    guarded_body,
    refuse_coded,
    too_slow,
)

log = structlog.get_logger(__name__)

ROOT = "/app/uploads/"
ITEM = "/app/uploads/{id}"
RECORD_ID_HEADER = "X-Record-Id"


def setup_uploads(app: web.Application) -> None:
    app[PARTIALS] = Partials(app[keys.SETTINGS].storage.data_dir / "uploads")
    app.on_response_prepare.append(_mark_tus)


async def _mark_tus(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer under `/app/uploads` says which protocol it speaks, errors too."""
    if request.path.startswith(ROOT.rstrip("/")):
        response.headers["Tus-Resumable"] = TUS_VERSION


def _bad(message: str) -> ApiError:
    return ApiError(400, "bad_request", message, close=True)


def _require_version(request: web.Request) -> None:
    if request.headers.get("Tus-Resumable") != TUS_VERSION:
        raise ApiError(412, "unsupported_version",
                       f"send Tus-Resumable: {TUS_VERSION} (the only version spoken)",
                       headers={"Tus-Version": TUS_VERSION}, close=True)


def _count(request: web.Request, name: str) -> int:
    try:
        return parse_count(request.headers.get(name), name=name)
    except UploadHeaderError as exc:
        raise _bad(str(exc)) from None


def _headers(upload: Upload) -> dict[str, str]:
    headers = {"Upload-Offset": str(upload.received),
               "Upload-Expires": http_date(parse_time(upload.expires_at))}
    if upload.deferred:
        headers["Upload-Defer-Length"] = "1"
    else:
        headers["Upload-Length"] = str(upload.length)
    if upload.record_id is not None:
        headers[RECORD_ID_HEADER] = upload.record_id
    return headers


def _conflict(upload: Upload, message: str) -> ApiError:
    return ApiError(409, "offset_mismatch", message, close=True,
                    headers={"Upload-Offset": str(upload.received)})


async def _owned(request: web.Request, owner_id: str) -> Upload:
    """The asker's upload named in the path; 404 for anybody else's, 410 once expired."""
    upload_id = parse_id(request.match_info["id"])
    upload = None if upload_id is None else await reads.uploads.owned(
        request.app[keys.READERS], upload_id=upload_id, owner_id=owner_id)
    if upload is None:
        raise ApiError(404, "not_found", "no such upload", close=True)
    if upload.record_id is None and upload.expires_at < stamp(request.app[keys.CLOCK]):
        raise ApiError(410, "upload_expired", "the upload expired; start it again",
                       close=True)
    return upload


@declare("uploadsProtocol", "What the tus server offers", {
    204: empty("Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm")})
async def options(request: web.Request) -> web.Response:
    limit = request.app[keys.SETTINGS].server.upload_max_bytes
    return web.Response(status=204, headers={
        "Tus-Version": TUS_VERSION, "Tus-Extension": ",".join(EXTENSIONS),
        "Tus-Max-Size": str(limit), "Tus-Checksum-Algorithm": ",".join(CHECKSUM_ALGORITHMS),
    })


@declare("createUpload", "Begin a resumable upload of Upload-Length bytes (no body)", {
    201: empty("Created; Location names the upload", headers={
        "Location": {"schema": {"type": "string"}}, "Upload-Expires": STATE["Upload-Expires"]}),
    400: "Malformed Upload-Length or Upload-Metadata, an empty file, an unknown language, or "
         "a body",
    403: "Cross-site request, a read token, or a `space` where the user's role files no "
         "records",
    404: "A `space` that is not one of the user's",
    412: VERSION_ERROR, 413: "Upload-Length above the largest upload",
    429: "Rate limited, or too many unfinished uploads (too_many_open_uploads)",
    507: "No room for the file now",
}, parameters=(VERSION, *CREATE_HEADERS))
async def create(request: web.Request) -> web.Response:
    """`POST /app/uploads/`: an upload of `Upload-Length` bytes begins (no body)."""
    _require_version(request)
    owner = current_user(request)
    app = request.app
    server = app[keys.SETTINGS].server
    if request.body_exists:
        raise _bad("creation with a body is not offered: POST, then PATCH the bytes")
    # A recording still going on does not know its length: a PATCH names it later.
    deferred = request.headers.get("Upload-Defer-Length") is not None
    if deferred and (request.headers["Upload-Defer-Length"] != "1"
                     or "Upload-Length" in request.headers):
        raise _bad("send Upload-Length, or Upload-Defer-Length: 1 without it")
    length = server.upload_max_bytes if deferred else _count(request, "Upload-Length")
    if length == 0:
        raise ApiError(400, "empty_file", "the file is empty", close=True)
    if length > server.upload_max_bytes:
        raise ApiError(413, "payload_too_large",
                       f"the file is larger than {server.upload_max_bytes} bytes", close=True)
    try:
        metadata = parse_metadata(request.headers.get("Upload-Metadata"))
    except UploadHeaderError as exc:
        raise _bad(str(exc)) from None
    language = check_language(app, metadata.get("language") or None)
    space = await upload_space(request, metadata.get("space"))
    try:
        app[keys.FILES].check_room(None if deferred else length)
    except StorageFull:
        raise ApiError(507, "insufficient_storage",
                       "the server has no room for this file now; nothing was stored",
                       close=True, headers={"Retry-After": "300"}) from None
    upload_id = new_unguessable_id()
    try:
        upload = await app[keys.WRITER].ask(CreateUpload(
            upload_id=upload_id, owner_id=owner.id, length=length, deferred=deferred,
            filename=metadata.get("filename", "")[:FILENAME_MAX_CHARS],
            language=language, space=space,
            ttl_seconds=server.resumable_expire_seconds,
            most=server.resumable_open_per_user_max))
    except Conflict:
        raise ApiError(429, "too_many_open_uploads", (
            f"at most {server.resumable_open_per_user_max} unfinished uploads per person; "
            "finish or delete one first"), close=True) from None
    app[PARTIALS].create(upload_id)
    RESUMABLE_UPLOADS.labels("created").inc()
    return web.Response(status=201, headers={
        "Location": f"{ROOT}{upload_id}", "Upload-Offset": "0",
        "Upload-Expires": http_date(parse_time(upload.expires_at))})


@declare("uploadOffset", "Where the upload stands", {
    200: empty("The stored offset", headers=STATE), 404: empty("No such upload"),
    410: empty("The upload expired"), 412: VERSION_ERROR,
}, parameters=(VERSION, UPLOAD_ID))
async def head(request: web.Request) -> web.Response:
    """`HEAD`: the stored offset (where to continue), and the record once there is one."""
    _require_version(request)
    upload = await _owned(request, current_user(request).id)
    partials = request.app[PARTIALS]
    # A complete upload without its record: the server stopped between the last
    # PATCH's bytes and the record; the client's HEAD finishes it.
    if upload.complete and upload.record_id is None and upload.id not in partials.busy:
        upload = await _finish_held(request, upload)
    elif upload.record_id is not None and upload.id not in partials.busy:
        # Stopped after the record, before its bytes' partial file was removed.
        partials.remove(upload.id)
    return web.Response(status=200, headers=_headers(upload))


@declare("appendToUpload", "Append bytes at Upload-Offset, which must be the stored offset",
         PATCH_ANSWERS, parameters=(VERSION, UPLOAD_ID, *PATCH_HEADERS), body=PATCH_BODY)
async def patch(request: web.Request) -> web.Response:
    """`PATCH`: bytes appended at `Upload-Offset`, which must be the stored offset."""
    _require_version(request)
    if request.content_type != OFFSET_CONTENT_TYPE:
        raise ApiError(415, "unsupported_media_type",
                       f"send the bytes as {OFFSET_CONTENT_TYPE}", close=True)
    refuse_coded(request.headers)
    offset = _count(request, "Upload-Offset")
    try:
        checksum = parse_checksum(request.headers.get("Upload-Checksum"))
    except UploadHeaderError as exc:
        raise _bad(str(exc)) from None
    owner = current_user(request)
    upload = await _owned(request, owner.id)
    partials = request.app[PARTIALS]
    if offset != upload.received:
        raise _conflict(upload, f"the upload holds {upload.received} bytes; "
                        "continue from there (HEAD tells it)")
    # One request at a time writes (or finishes) an upload: the second is 409 before
    # it reads a byte, and nothing below runs twice at once.
    if upload.id in partials.busy:
        raise _conflict(upload, "another PATCH is writing this upload")
    partials.busy.add(upload.id)
    try:
        return await _append(request, owner.id, upload, offset, checksum)
    finally:
        partials.busy.discard(upload.id)


async def _append(request: web.Request, owner_id: str, upload: Upload, offset: int,
                  checksum: Checksum | None) -> web.Response:
    upload = await _named_length(request, upload)
    if upload.complete:
        # The last answer was lost: say again what became of it (finish it if the
        # server stopped before the record was made).
        if upload.record_id is None:
            upload = await _finish(request, upload)
        return web.Response(status=204, headers=_headers(upload))
    declared = request.content_length
    if declared is not None and offset + declared > upload.length:
        raise ApiError(413, "past_upload_length",
                       "the body goes past the declared Upload-Length", close=True)
    try:
        request.app[keys.FILES].check_room(
            declared if declared is not None else upload.length - upload.received)
    except StorageFull:
        raise ApiError(507, "insufficient_storage", "the server has no room for this now",
                       close=True, headers={"Retry-After": "300"}) from None
    try:
        async with guarded_body(request, request.app[UPLOAD_SLOTS], owner_id):
            received = await receive(request, upload, checksum)
    except BodyTooSlow:
        raise too_slow("upload_too_slow", "upload") from None
    except HttpProcessingError:
        raise ApiError(400, "incomplete_upload",
                       "the body ended before its declared length", close=True) from None
    upload = replace(upload, received=received,
                     expires_at=stamp(request.app[keys.CLOCK], plus_seconds=ttl(request)))
    if upload.complete:
        upload = await _finish(request, upload)
    return web.Response(status=204, headers=_headers(upload))


@declare("terminateUpload", "End the upload and remove its bytes (a record it became stays)", {
    204: empty("Removed"), 404: "No such upload", 409: "A PATCH is writing it",
    410: "The upload expired", 412: VERSION_ERROR,
}, parameters=(VERSION, UPLOAD_ID))
async def terminate(request: web.Request) -> web.Response:
    """`DELETE`: the upload and its bytes gone (a record it became stays)."""
    _require_version(request)
    upload = await _owned(request, current_user(request).id)
    partials = request.app[PARTIALS]
    if upload.id in partials.busy:
        raise _conflict(upload, "a PATCH is writing this upload; try again when it ends")
    await _remove(request.app, upload.id)
    RESUMABLE_UPLOADS.labels("terminated").inc()
    return web.Response(status=204)


async def _named_length(request: web.Request, upload: Upload) -> Upload:
    """`Upload-Length` on a PATCH: names a deferred upload's length (once, not below the
    stored bytes nor above the limit); on any other upload it must repeat the length."""
    if "Upload-Length" not in request.headers:
        return upload
    length = _count(request, "Upload-Length")
    if not upload.deferred:
        if length != upload.length:
            raise _bad("Upload-Length differs from the upload's")
        return upload
    limit = request.app[keys.SETTINGS].server.upload_max_bytes
    if length > limit:
        raise ApiError(413, "payload_too_large", f"the file is larger than {limit} bytes",
                       close=True)
    if length == 0:
        raise ApiError(400, "empty_file", "the file is empty", close=True)
    if length < upload.received or not await request.app[keys.WRITER].ask(
            SetUploadLength(upload_id=upload.id, length=length)):
        raise _conflict(upload, "Upload-Length is below the bytes stored, or was named "
                        "already")
    return replace(upload, length=length, deferred=False)


async def _finish_held(request: web.Request, upload: Upload) -> Upload:
    partials = request.app[PARTIALS]
    partials.busy.add(upload.id)
    try:
        return await _finish(request, upload)
    finally:
        partials.busy.discard(upload.id)


async def _finish(request: web.Request, upload: Upload) -> Upload:
    """The complete file through the one-shot upload's intake; refused: the upload is
    removed (nothing stays, as there), except when the refusal says to try again: the
    file could not be examined now (503), or the disk is full now (507)."""
    app = request.app
    space = upload.space
    if space is not None and not await may_file_into(
            app[keys.READERS], space_id=space, person=upload.owner_id):
        log.warning("upload_space_refused", space_id=space)
        space = None
    # The record and the upload's mark are one transaction (`AcceptRecord`'s
    # `upload_id`): a server killed right after the record leaves an upload that names
    # it, and the retry answers that record instead of making a second one.
    intake = Intake(owner_id=upload.owner_id, original_name=upload.filename,
                    language=upload.language or default_language(app), upload_id=upload.id,
                    space_id=space)
    try:
        accepted = await store(request, intake, app[PARTIALS].chunks(upload.id),
                               expected_size=upload.length)
    except ApiError as exc:
        if exc.status not in (503, 507):
            await _remove(app, upload.id)
            RESUMABLE_UPLOADS.labels("refused").inc()
        raise
    except Conflict:
        # Another process finished it meanwhile (its record is the one), or removed it.
        app[PARTIALS].remove(upload.id)
        now = await reads.uploads.owned(app[keys.READERS], upload_id=upload.id,
                                        owner_id=upload.owner_id)
        if now is None or now.record_id is None:
            raise ApiError(404, "not_found", "no such upload", close=True) from None
        return now
    app[PARTIALS].remove(upload.id)
    RESUMABLE_UPLOADS.labels("finished").inc()
    return replace(upload, record_id=accepted.record_id)


async def _remove(app: web.Application, upload_id: str) -> None:
    """Row first, then bytes: a crash between leaves an orphan file the sweeper removes."""
    await app[keys.WRITER].ask(DeleteUpload(upload_id=upload_id))
    app[PARTIALS].remove(upload_id)
