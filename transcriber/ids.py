"""The one source of identifiers: lowercase ULIDs, monotonic within a millisecond."""

from __future__ import annotations

import re
import secrets
import threading
import time

from ulid import ULID

_ULID_RE = re.compile(r"^[0-7][0-9a-hjkmnp-tv-z]{25}$")
_RANDOM_BITS = 80
_lock = threading.Lock()
_last = 0


def new_id() -> str:
    """A fresh lowercase ULID; ids made by this process sort in creation order."""
    global _last  # noqa: PLW0603 - the one process-wide monotonic cursor
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        candidate = (now_ms << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
        if candidate <= _last:
            # Same millisecond (or the wall clock stepped back): keep the order.
            candidate = _last + 1
        _last = candidate
    return str(ULID.from_int(candidate)).lower()


def new_unguessable_id() -> str:
    """A fresh lowercase ULID with all 80 random bits random (no monotonic step).

    For names a sender must not be able to guess from an id it was shown
    (file ids: a record's original would otherwise be its id plus one).
    """
    now_ms = time.time_ns() // 1_000_000
    return str(ULID.from_int((now_ms << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS))).lower()


def parse_id(raw: str | None) -> str | None:
    """Strict parse at the boundary: the id in lower case, or None (= not found)."""
    if raw is None:
        return None
    candidate = raw.lower()
    if not _ULID_RE.fullmatch(candidate):
        return None
    return candidate
