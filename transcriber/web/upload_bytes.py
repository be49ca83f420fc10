"""The bytes of a tus `PATCH` (`web.uploads`): appended to the upload's partial
file at its stored offset, and that offset stored for good.

Durability: the bytes go to a partial file (`web.partials`), and the offset
to the upload's row through the writer, after an fsync, every `PERSIST_BYTES`
and when a body ends early (a dropped connection, a stall). A server killed
mid-`PATCH` loses at most the bytes since the last of those, and the client
learns the offset to continue from with `HEAD`. A `PATCH` with
`Upload-Checksum` is all or nothing: its bytes are kept only when they hash to
the digest (460 otherwise), so it stores its offset once, at its end.
"""

from __future__ import annotations

import asyncio
from typing import BinaryIO

from aiohttp import web

from transcriber.db.commands.uploads import AdvanceUpload
from transcriber.db.reads.uploads import Upload
from transcriber.domain.uploads import Checksum
from transcriber.web import keys
from transcriber.web.errors import ApiError
from transcriber.web.partials import PARTIALS, PartialGone, sync
from transcriber.web.upload import CHUNK_BYTES

# How often a long PATCH stores its offset for good (after an fsync): what a
# server killed mid-PATCH can lose at most.
PERSIST_BYTES = 8 * 1024 * 1024
# tus names this status for a body that does not hash to its Upload-Checksum.
CHECKSUM_MISMATCH = 460


def ttl(request: web.Request) -> float:
    """How long an upload lives on after its last stored byte."""
    return request.app[keys.SETTINGS].server.resumable_expire_seconds


async def receive(request: web.Request, upload: Upload, checksum: Checksum | None) -> int:
    """Append the body at the stored offset; the new offset, stored for good."""
    partials = request.app[PARTIALS]
    try:
        handle = partials.open_at(upload.id, upload.received)
    except PartialGone:
        # Not removed here: with several web processes, each with its own data folder,
        # the bytes may be on another one (docs/api.md); expiry removes it if not.
        raise ApiError(410, "upload_lost", "this server does not hold the upload's bytes; "
                       "start it again", close=True) from None
    digest = None if checksum is None else checksum.new_hash()
    stored = written = upload.received
    with handle:
        try:
            async for chunk in request.content.iter_chunked(CHUNK_BYTES):
                if written + len(chunk) > upload.length:
                    raise ApiError(413, "past_upload_length",
                                   "the body goes past the declared Upload-Length", close=True)
                handle.write(chunk)
                written += len(chunk)
                if digest is not None:
                    digest.update(chunk)
                elif written - stored >= PERSIST_BYTES:
                    stored = await persist(request, handle, upload, stored, written)
        except ApiError:
            handle.truncate(stored)  # what was not acknowledged does not stay
            raise
        except BaseException:
            # The body ended early (a dropped connection, a stall, the server
            # stopping): keep what arrived, unless the checksum must see it whole.
            if digest is None and written > stored:
                await asyncio.shield(persist(request, handle, upload, stored, written))
            raise
        if checksum is not None and digest is not None and digest.digest() != checksum.digest:
            handle.truncate(stored)
            raise ApiError(CHECKSUM_MISMATCH, "checksum_mismatch",
                           "the body does not match its Upload-Checksum; nothing was kept",
                           close=True)
        if written > stored:
            stored = await persist(request, handle, upload, stored, written)
    return stored


async def persist(request: web.Request, handle: BinaryIO, upload: Upload,
                   stored: int, written: int) -> int:
    await sync(handle)
    moved = await request.app[keys.WRITER].ask(AdvanceUpload(
        upload_id=upload.id, expected=stored, received=written, ttl_seconds=ttl(request)))
    if not moved:
        raise ApiError(409, "offset_mismatch", "the upload moved on meanwhile; HEAD tells "
                       "where to continue", close=True)
    return written
