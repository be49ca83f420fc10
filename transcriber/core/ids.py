"""The one source of identifiers: lowercase ULIDs, monotonic within a millisecond.

A ULID is 48 bits of Unix milliseconds then 80 random bits, written as 26
Crockford base32 characters (130 bits; the first character carries 3). The
text is made here from the integer, ten bits (two characters) per table
lookup, not through `ulid.ULID` objects: an id is made for every claim and
every journal row, in the writer's hot path (about 1 µs instead of 7).
`tests/unit/test_ids.py` checks the encoding against python-ulid.
"""

from __future__ import annotations

import os
import re
import threading
import time

_ULID_RE = re.compile(r"^[0-7][0-9a-hjkmnp-tv-z]{25}$")
_RANDOM_BITS = 80
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
# Every 10-bit value as its two characters.
_PAIRS = tuple(high + low for high in _CROCKFORD for low in _CROCKFORD)
_lock = threading.Lock()
_last = 0


def encode(value: int) -> str:
    """The lowercase 26-character ULID text of a 128-bit integer."""
    p = _PAIRS
    return (p[value >> 120] + p[value >> 110 & 1023] + p[value >> 100 & 1023]
            + p[value >> 90 & 1023] + p[value >> 80 & 1023] + p[value >> 70 & 1023]
            + p[value >> 60 & 1023] + p[value >> 50 & 1023] + p[value >> 40 & 1023]
            + p[value >> 30 & 1023] + p[value >> 20 & 1023] + p[value >> 10 & 1023]
            + p[value & 1023])


def new_id() -> str:
    """A fresh lowercase ULID; ids made by this process sort in creation order."""
    global _last  # noqa: PLW0603 - the one process-wide monotonic cursor
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last >> _RANDOM_BITS:
            # Same millisecond (or the wall clock stepped back): the next value,
            # as the ULID spec's monotonic generator does; the random bits were
            # drawn for this millisecond's first id.
            candidate = _last + 1
        else:
            candidate = (now_ms << _RANDOM_BITS) | int.from_bytes(os.urandom(10), "big")
        _last = candidate
    return encode(candidate)


def new_unguessable_id() -> str:
    """A fresh lowercase ULID with all 80 random bits random (no monotonic step).

    For names a sender must not be able to guess from an id it was shown
    (file ids: a record's original would otherwise be its id plus one).
    """
    now_ms = time.time_ns() // 1_000_000
    return encode((now_ms << _RANDOM_BITS) | int.from_bytes(os.urandom(10), "big"))


def parse_id(raw: str | None) -> str | None:
    """Strict parse at the boundary: the id in lower case, or None (= not found)."""
    if raw is None:
        return None
    candidate = raw.lower()
    if not _ULID_RE.fullmatch(candidate):
        return None
    return candidate
