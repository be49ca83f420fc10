"""Keyset pages and search terms: pure parsing of `limit`, `cursor` and `q`.

A cursor is opaque to clients: base64url of a small JSON array naming the
page kind and the last item's sort key. Plain pages sort on
`(created_at, id)` newest first; search pages on `(score, id)`, best first;
topic pages on the topic's name.
A cursor of the wrong kind, or anything malformed, is a 400.
"""

from __future__ import annotations

import base64
import binascii
import math
import re

import orjson

from transcriber.core.errors import QueryTooBroad
from transcriber.core.ids import parse_id
from transcriber.db.reads.lists import PageAfter, SearchAfter
from transcriber.domain.search import QUERY_MAX, Query, parse
from transcriber.web.errors import ApiError, bad_request
from transcriber.web.texts import message

# PageAfter, SearchAfter: the sort keys a cursor holds (the reads take them).
__all__ = ["QUERY_MAX", "TOPIC_CURSOR_MAX", "PageAfter", "SearchAfter", "decode_cursor",
           "decode_topic_cursor", "encode_cursor", "encode_topic_cursor",
           "parse_limit", "parse_query"]

# A topic name is at most 64 characters (JSON-escaped up to 6 bytes each), then base64.
TOPIC_CURSOR_MAX = 600
_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def parse_limit(raw: str | None, *, default: int, maximum: int) -> int:
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit():
        raise bad_request(f"limit must be an integer from 1 to {maximum}")
    value = int(raw)
    if not 1 <= value <= maximum:
        raise bad_request(f"limit must be an integer from 1 to {maximum}")
    return value


def encode_cursor(after: PageAfter | SearchAfter) -> str:
    if isinstance(after, PageAfter):
        payload: list[object] = ["p", after.created_at, after.id]
    else:
        payload = ["s", after.score, after.id]
    return base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")


def decode_cursor(raw: str, *, search: bool) -> PageAfter | SearchAfter:
    """The cursor's key; 400 when it is malformed or of the other kind of page."""
    invalid = bad_request("cursor is not valid for this listing")
    if len(raw) > 200:
        raise invalid
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError):
        raise invalid from None
    if not isinstance(payload, list) or len(payload) != 3:
        raise invalid
    kind, key, raw_id = payload
    record_id = parse_id(raw_id) if isinstance(raw_id, str) else None
    if record_id is None:
        raise invalid
    if not search and kind == "p" and isinstance(key, str) and _TIME_RE.match(key):
        return PageAfter(created_at=key, id=record_id)
    if (search and kind == "s" and isinstance(key, int | float) and not isinstance(key, bool)
            and math.isfinite(key)):
        return SearchAfter(score=float(key), id=record_id)
    raise invalid


def encode_topic_cursor(name: str) -> str:
    """A page of topics ends at a name: the next starts after it."""
    return base64.urlsafe_b64encode(orjson.dumps(["t", name])).decode().rstrip("=")


def decode_topic_cursor(raw: str) -> str:
    """The name the page starts after; 400 when the cursor is not a topic page's."""
    invalid = bad_request("cursor is not valid for this listing")
    if len(raw) > TOPIC_CURSOR_MAX:
        raise invalid
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError):
        raise invalid from None
    if (not isinstance(payload, list) or len(payload) != 2 or payload[0] != "t"
            or not isinstance(payload[1], str) or not payload[1]):
        raise invalid
    return payload[1]


def parse_query(raw: str, *, language: str = "en") -> Query:
    """The terms of what a person typed (`transcriber.domain.search`); 400 past QUERY_MAX,
    400 `query_too_broad` (in `language`, the asker's) past the prefix caps."""
    if len(raw) > QUERY_MAX:
        raise bad_request(f"q is longer than {QUERY_MAX} characters")
    try:
        return parse(raw)
    except QueryTooBroad as exc:
        raise ApiError(400, "query_too_broad", message(language, exc.reason),
                       param="q") from None

