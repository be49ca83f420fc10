"""Download helpers: only regular files inside their record's folder, safe
`Content-Disposition`, content types, Range pre-checks."""

from __future__ import annotations

import asyncio
import unicodedata
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import structlog
from aiohttp import web

from transcriber.errors import UnsafePath
from transcriber.files import RecordFiles
from transcriber.providers import media
from transcriber.web.errors import ApiError, not_found

log = structlog.get_logger(__name__)

FALLBACK_TYPE = "application/octet-stream"


async def servable_file(files: RecordFiles, record_id: str, file_name: str, *,
                        copy: str) -> tuple[Path, int]:
    """The path and size of a stored file that may be served: a regular file inside
    its record's folder, reached without a symlink (`RecordFiles.regular_file`: a
    restored or tampered folder may hold one pointing anywhere). Anything else is
    404 and an error event. FileResponse opens the path once more; only the
    service writes record folders, so nothing swaps a symlink in between."""
    try:
        found = await asyncio.to_thread(files.regular_file, record_id, file_name)
    except FileNotFoundError:
        log.error("record_file_missing", record_id=record_id, copy=copy)
        raise not_found(f"the {copy} copy is not available") from None
    except (UnsafePath, OSError) as exc:
        log.error("record_file_refused", record_id=record_id, copy=copy,
                  error=type(exc).__name__)
        raise not_found(f"the {copy} copy is not available") from None
    return files.path_of(record_id, file_name), found.st_size


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
