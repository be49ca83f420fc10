"""JSON request bodies: at most `server.json_max_bytes`, read as they come, paced.

A handler reads its body before anything else it does (and before any
record is looked up): the cap holds whoever sends it, for any id. A
declared length over the cap is refused before a byte is read; a body
without one is counted while it is read and cut at the cap, so at most the
cap is ever held. The body's bytes are what the client sent: a body in a
content coding is refused (415, `uploadguard.refuse_coded`), never inflated
— no client of this API compresses a request (browsers never do), a body of
at most 64 KiB gains nothing from it, and refusing runs no decompressor on
what a stranger sent. While the body arrives it holds one of
`server.json_bodies_max` slots and is watched by the upload's pace limits.
"""

from __future__ import annotations

import orjson
from aiohttp import StreamReader, web

from transcriber.web import keys
from transcriber.web.errors import ApiError, bad_request
from transcriber.web.identity import current_user
from transcriber.web.uploadguard import (
    JSON_SLOTS,
    BodyTooSlow,
    guarded_body,
    refuse_coded,
    too_slow,
)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"the request body is larger than {limit} bytes",
                    close=True)


async def _read_capped(content: StreamReader, limit: int) -> bytes:
    body = bytearray()
    while chunk := await content.readany():
        if len(body) + len(chunk) > limit:
            raise _too_large(limit)
        body += chunk
    return bytes(body)


READ_BODY = web.RequestKey("read_body", bytes)
"""A body read ahead of the handler (the record routes' access check reads it first, so
a body over the cap is 413 before the record is looked up); `read_body` answers it."""


def has_body(request: web.Request) -> bool:
    """Whether the request sent a body (still to read, or read ahead: `READ_BODY`)."""
    return READ_BODY in request or request.can_read_body


async def read_body(request: web.Request) -> bytes:
    """The whole body, at most `server.json_max_bytes`, refused when coded."""
    if READ_BODY in request:
        return request[READ_BODY]
    limit = request.app[keys.SETTINGS].server.json_max_bytes
    refuse_coded(request.headers)
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    try:
        async with guarded_body(request, request.app[JSON_SLOTS], current_user(request).id):
            return await _read_capped(request.content, limit)
    except BodyTooSlow:
        raise too_slow("body_too_slow", "request body") from None


async def read_json(request: web.Request) -> object:
    if request.content_type != "application/json":
        raise ApiError(415, "unsupported_media_type", "send application/json", close=True)
    try:
        return orjson.loads(await read_body(request))
    except orjson.JSONDecodeError:
        raise bad_request("the body is not JSON") from None
