"""Download helpers: only regular files inside their record's folder, safe
`Content-Disposition`, content types, Range pre-checks, and the sending itself.

Local files are sent by aiohttp's `FileResponse`. Files in a bucket
(`storage.files = s3`) are streamed through the service, so one door keeps
the auth: the same headers, `Range` answered with 206 and `Content-Range`
(the object read only over the range asked for), 416 in the API's shape,
`If-Range` against the object's ETag or time."""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath
from urllib.parse import quote

import structlog
from aiohttp import web

from transcriber.core.errors import PermanentFailure, TransientFailure, UnsafePath
from transcriber.ports import RecordFiles
from transcriber.ports.files import Servable
from transcriber.providers import media
from transcriber.web.errors import ApiError, not_found

log = structlog.get_logger(__name__)

FALLBACK_TYPE = "application/octet-stream"


async def servable_file(files: RecordFiles, record_id: str, file_name: str, *,
                        copy: str) -> Servable:
    """A stored file that may be served: locally, a regular file inside its record's
    folder, reached without a symlink (`RecordFiles.regular_file`: a restored or
    tampered folder may hold one pointing anywhere); in a bucket, an object that
    exists. Anything else is 404 and an error event. FileResponse opens the path
    once more; only the service writes record folders, so nothing swaps a symlink
    in between."""
    try:
        return await files.servable(record_id, file_name)
    except FileNotFoundError:
        log.error("record_file_missing", record_id=record_id, copy=copy)
        raise not_found(f"the {copy} copy is not available") from None
    except (UnsafePath, OSError, PermanentFailure) as exc:
        log.error("record_file_refused", record_id=record_id, copy=copy,
                  error=type(exc).__name__)
        raise not_found(f"the {copy} copy is not available") from None
    except TransientFailure as exc:
        raise _unavailable(record_id, copy, exc) from None


def _unavailable(record_id: str, copy: str, exc: Exception) -> ApiError:
    log.warning("record_file_unavailable", record_id=record_id, copy=copy,
                error=type(exc).__name__)
    return ApiError(503, "unavailable", f"the {copy} copy cannot be read now; try again")


async def send_file(request: web.Request, files: RecordFiles, record_id: str,
                    file_name: str, *, copy: str, headers: dict[str, str]
                    ) -> web.StreamResponse:
    """The stored file with `headers`, whole or the range asked for."""
    found = await servable_file(files, record_id, file_name, copy=copy)
    check_range(request, found.size)
    if found.path is not None:
        return web.FileResponse(found.path, headers=headers)
    start, end = wanted_span(request, found)
    chunks = files.read(record_id, file_name, start=start, end=end)
    try:
        # The first chunk before the answer starts: a failure is still an error answer.
        first = (await anext(chunks, b"") if end > start and request.method != "HEAD"
                 else b"")
    except PermanentFailure as exc:
        log.error("record_file_refused", record_id=record_id, copy=copy,
                  error=type(exc).__name__)
        raise not_found(f"the {copy} copy is not available") from None
    except TransientFailure as exc:
        raise _unavailable(record_id, copy, exc) from None
    partial = (start, end) != (0, found.size)
    response = web.StreamResponse(status=206 if partial else 200, headers=headers)
    response.headers["Accept-Ranges"] = "bytes"
    if found.etag:
        response.headers["ETag"] = found.etag
    if found.modified is not None:
        response.last_modified = found.modified
    if partial:
        response.headers["Content-Range"] = f"bytes {start}-{end - 1}/{found.size}"
    response.content_length = end - start
    try:
        await response.prepare(request)
        if request.method != "HEAD":
            if first:
                await response.write(first)
            async for chunk in chunks:
                await response.write(chunk)
        await response.write_eof()
    finally:
        await chunks.aclose()
    return response


def wanted_span(request: web.Request, found: Servable) -> tuple[int, int]:
    """The bytes [start, end) to send: the Range asked for (already found satisfiable
    by `check_range`), or the whole file when there is none or `If-Range` names
    another version."""
    size = found.size
    if "Range" not in request.headers:
        return 0, size
    if not same_version(request, found):
        return 0, size
    try:
        rng = request.http_range
    except ValueError:
        return 0, size
    return span_of(rng.start, rng.stop, size)


def same_version(request: web.Request, found: Servable) -> bool:
    """Whether `If-Range` (absent, an ETag or a date, as FileResponse reads it) names the
    version stored, so the range applies."""
    given = request.headers.get("If-Range")
    if given is None:
        return True
    if given.startswith(('"', "W/")):
        return bool(found.etag) and given == found.etag
    since = request.if_range
    if since is None or found.modified is None:
        return since is None
    return found.modified.replace(microsecond=0) <= since


def span_of(start: int | None, stop: int | None, size: int) -> tuple[int, int]:
    """Pure: a parsed Range (`slice` bounds as aiohttp gives them) as [start, end)."""
    if start is None:
        return 0, size
    if start < 0:  # a suffix: the last -start bytes
        return max(size + start, 0), size
    return start, size if stop is None else min(stop, size)


def audio_type(fmt: str) -> str:
    return media.MEDIA_TYPES.get(fmt.lower(), FALLBACK_TYPE)


def download_name(original_filename: str, record_id: str, ext: str) -> str:
    """The sender's name with the extension of what is sent (`ext` without the dot)."""
    stem = PurePosixPath(original_filename).stem if original_filename else ""
    stem = stem or record_id
    return f"{stem}.{ext}" if ext else stem


def content_disposition(filename: str) -> str:
    """`attachment` with an ASCII fallback and the exact name as RFC 5987 `filename*`."""
    cleaned = "".join(ch for ch in filename if unicodedata.category(ch)[0] != "C")
    fallback = "".join(
        ch if ch.isascii() and ch.isprintable() and ch not in '"\\;' else "_" for ch in cleaned
    ) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(cleaned, safe='')}"


def check_range(request: web.Request, size: int) -> None:
    """Refuse an unsatisfiable Range in the API's error shape (416).

    aiohttp's FileResponse would answer 416 itself, but with an empty body;
    this check runs first so the client gets the one error shape.
    """
    if "Range" not in request.headers or "If-Range" in request.headers:
        return
    unsatisfiable = ApiError(416, "range_not_satisfiable",
                             "the requested range is not satisfiable",
                             headers={"Content-Range": f"bytes */{size}"})
    try:
        rng = request.http_range
    except ValueError:
        raise unsatisfiable from None
    start = rng.start
    if start is None:
        return
    if start < 0 and rng.stop is None:  # a suffix: the last -start bytes
        if size == 0:
            raise unsatisfiable
        return
    if start >= size:
        raise unsatisfiable
