"""Links for people outside: the secret, the stored hash, the expiry (pure).

A link's URL is `/s/<secret>`; the secret is `secrets.token_urlsafe(24)`:
192 random bits (the contract asks for at least 128), 32 URL-safe
characters, shown once to the person who made it and never stored. The
database keeps its SHA-256, hashed exactly as a bearer token is
(`domain.tokens.token_hash`, whose docstring says why a fast hash is right
for a random secret): a copy of the database opens no link, and a visitor's
secret finds its row by one indexed lookup of the hash, so no stored secret is
ever compared with a guess character by character.

An expired link and a revoked one (its row deleted) answer exactly what a
secret that never existed answers: nothing tells a visitor that a link was
once there.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from transcriber.core.clock import format_time
from transcriber.domain.tokens import same_hash, token_hash
from transcriber.domain.transcript_formats import TranscriptFormat

RANDOM_BYTES = 24
SECRET_CHARS = 32  # token_urlsafe(24): 24 bytes are 32 base64 characters, unpadded
PATH_PREFIX = "/s/"
DEFAULT_DAYS = 7
TRANSCRIPT_FORMATS: tuple[TranscriptFormat, ...] = ("txt", "srt")
_SECRET_RE = re.compile(f"[A-Za-z0-9_-]{{{SECRET_CHARS}}}")


@dataclass(frozen=True, slots=True, kw_only=True)
class NewLink:
    """A link's secret as it is made: `secret` is shown once, `hash` is what is stored."""

    secret: str
    hash: str

    @property
    def path(self) -> str:
        return link_path(self.secret)


def new_link() -> NewLink:
    secret = secrets.token_urlsafe(RANDOM_BYTES)
    return NewLink(secret=secret, hash=secret_hash(secret))


def secret_hash(secret: str) -> str:
    """The stored form: the bearer tokens' hash (SHA-256, hex)."""
    return token_hash(secret)


def matches(stored_hash: str, secret: str) -> bool:
    """Constant-time: the row found by the hash's index is the secret's (the index
    already said so; the compare keeps the rule of `domain.tokens` in one place)."""
    return same_hash(stored_hash, secret_hash(secret))


def well_formed(secret: str) -> bool:
    """Pure: the shape of a secret this service makes, checked before any hashing or
    lookup (a malformed one answers the same 404, without touching the database)."""
    return _SECRET_RE.fullmatch(secret) is not None


def link_path(secret: str) -> str:
    return PATH_PREFIX + secret


def expires_at(now: datetime, days: int) -> str:
    """The stored expiry of a link made at `now` for `days` days."""
    if days < 1:
        raise ValueError("a link lasts at least one day")
    return format_time(now + timedelta(days=days))


def days_problem(days: object, most: int) -> str | None:
    """Why `expires_in_days` is refused (a whole number from 1 to `links.max_days`)."""
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= most:
        return f"expires_in_days must be a whole number from 1 to {most}"
    return None


def open_now(expires: str, now: datetime) -> bool:
    """Whether a link expiring at `expires` (the stored format) still opens at `now`:
    it stops at that second exactly (the stored times compare as text)."""
    return format_time(now) < expires
