"""Personal access tokens: their text, the hash that is stored, their scope (pure).

A token is `tx_` followed by `secrets.token_urlsafe(32)`: 256 random bits
(the contract asks for at least 160), shown once and never stored. The
database keeps the SHA-256 of the whole text, so a copy of it (a backup, a
stolen file) holds no usable token.

Why SHA-256 and not a slow password hash (scrypt, Argon2): a slow hash makes
guessing a *low-entropy* secret expensive, one guess at a time. Nobody can
guess 256 random bits however fast the hash is (2^255 tries on average), so
the slowness would buy nothing, and it would cost every API request tens of
milliseconds. A fast, unsalted hash also lets the service find the row by
it (one indexed lookup) instead of trying every stored token.

A person sends it as `Authorization: Bearer tx_…`. A `read` token may only
read (GET, HEAD); every state-changing method needs `write`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, get_args

from transcriber.core.clock import format_time
from transcriber.domain.text import text_problem

PREFIX = "tx_"
RANDOM_BYTES = 32
Scope = Literal["read", "write"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
NAME_MAX = 100
EXPIRES_DAYS_MAX = 3650
# How often `last_used_at` may be written for one token (the writer, not every request).
TOUCH_SECONDS = 60
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The whole token: the prefix and 43 URL-safe base64 characters (32 bytes, unpadded).
_TOKEN_RE = re.compile(r"tx_[A-Za-z0-9_-]{43}")
_BEARER = "bearer"


@dataclass(frozen=True, slots=True, kw_only=True)
class NewToken:
    """A token as it is made: `text` is shown once, `hash` is what is stored."""

    text: str
    hash: str


def new_token() -> NewToken:
    text = PREFIX + secrets.token_urlsafe(RANDOM_BYTES)
    return NewToken(text=text, hash=token_hash(text))


def token_hash(text: str) -> str:
    """The stored form: SHA-256 of the token's text, hex (why not slower: module doc)."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def same_hash(stored: str, presented: str) -> bool:
    """Constant-time: how much of a stored hash matches never shows in the answer's
    time. The row was found by the hash's index, whose timing can tell at most
    something of the *hash* of a guess, which helps nobody find a token."""
    return hmac.compare_digest(stored.encode(), presented.encode())


def well_formed(text: str) -> bool:
    """Pure: the shape of a token this service makes (checked before any hashing)."""
    return _TOKEN_RE.fullmatch(text) is not None


def bearer_credentials(authorization: Sequence[str]) -> str | None:
    """The credentials of an `Authorization: Bearer …` header, None when the request
    has no bearer header (none, or another scheme such as a proxy's `Basic`).

    A header given twice, or a bearer header without credentials, answers "" (a
    bearer attempt that cannot be right): it is refused, never ignored."""
    # Any whitespace ends the scheme, as a proxy's `^Bearer\s` rule reads it: a tab
    # after the scheme is still a bearer attempt, never a request without one.
    bearers = [value for value in authorization
               if (value.split(None, 1) or [""])[0].lower() == _BEARER]
    if not bearers:
        return None
    if len(authorization) > 1:
        return ""
    parts = bearers[0].strip().split(None, 1)
    return parts[1].strip() if len(parts) == 2 else ""


def scope_allows(scope: str, method: str) -> bool:
    """A `read` token reads; anything else needs `write`."""
    return scope == "write" or method.upper() in READ_METHODS



def name_problem(name: str) -> str | None:
    """Why a token's name is refused (one line of at most `NAME_MAX` characters), or None."""
    if len(name) > NAME_MAX:
        return f"is longer than {NAME_MAX} characters"
    return text_problem(name)


def expires_at(now: datetime, days: int | None) -> str | None:
    """The stored expiry of a token made at `now` for `days` days (None: never)."""
    if days is None:
        return None
    if not 1 <= days <= EXPIRES_DAYS_MAX:
        raise ValueError(f"expires_days must be 1 to {EXPIRES_DAYS_MAX}")
    return format_time(now + timedelta(days=days))
