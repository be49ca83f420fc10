"""The command-line client's rules for what its server answers: nothing is taken on trust.

A client points at a URL someone gave it; the server there may be broken, or
hostile. So every answer is read under bounds (`Bounds`: a deadline for the
whole answer, a cap on its size), a redirect is followed only within the
server's own origin (the token never goes anywhere else), a card is parsed
into a typed `Card` (its `poll_after_ms` clamped), and a record id must be an
id. What breaks these rules is a `BadServerAnswer` (exit 4 at the end, one line);
a server that cannot be reached or answers too slowly is `Unreachable` (exit
3). The decisions here are pure; `upload.py` does the talking.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from yarl import URL

from transcriber.cli.texts import say
from transcriber.core.errors import TranscriberError
from transcriber.core.ids import parse_id

MIB = 1024 * 1024
# The longest one answer may take to arrive whole (head and body) once its request
# is sent; also the longest the server may leave the upload's body unread.
TIMEOUT_SECONDS = 120.0
# A 6-h record's JSON transcript with every word is about 6 MB; its card (which
# carries the utterances) about as much. Ten times that, and never a gigabyte.
TRANSCRIPT_MAX_BYTES = 64 * MIB
# An error answer is read for its message only.
ERROR_MAX_BYTES = 64 * 1024
# The card's `poll_after_ms` is obeyed within these bounds: a negative or zero
# value would poll in a tight loop, a huge one never again.
POLL_MIN_SECONDS, POLL_MAX_SECONDS = 0.5, 30.0
DEFAULT_POLL_SECONDS = 4.0
# `Retry-After` is obeyed within the same kind of bounds.
RETRY_MIN_SECONDS, RETRY_MAX_SECONDS = 0.5, 60.0
REDIRECTS_MAX = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# A POST is sent again only on these (the others turn it into a GET).
BODY_KEEPING_REDIRECTS = frozenset({307, 308})


T = TypeVar("T")


class ClientFailure(TranscriberError):
    """Something the client says in one line and ends on (a subclass per exit code)."""


class Unreachable(ClientFailure):
    """The server cannot be reached, answered too slowly or refused the credentials: exit 3."""


class BadServerAnswer(ClientFailure):
    """The server's answer broke the client's rules (too large, malformed, a redirect to
    another origin, an id that is not one): that file fails, exit 4 at the end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bounds:
    timeout_seconds: float = TIMEOUT_SECONDS
    transcript_max_bytes: int = TRANSCRIPT_MAX_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerProgress:
    stage: str
    done: int
    total: int
    fraction: float  # clamped to [0, 1]
    eta_seconds: float | None = None  # finite and not negative, or None


@dataclass(frozen=True, slots=True, kw_only=True)
class Card:
    """What the client reads of a record's card."""

    stage: str
    halt_reason: str | None  # None: not halted
    halt_message: str
    poll_seconds: float | None  # None: settled, nothing changes by itself
    progress: ServerProgress | None

    @classmethod
    def from_body(cls, body: bytes) -> Card:
        """The card from its JSON, or `BadServerAnswer` naming what is wrong (never its text)."""
        try:
            card = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise BadServerAnswer(say("answer.card", field="(JSON)")) from None
        if not isinstance(card, dict):
            raise BadServerAnswer(say("answer.card", field="(object)"))
        stage = _field(card, "stage", str)
        halt = card.get("halt")
        reason: str | None = None
        message = ""
        if halt is not None:
            if not isinstance(halt, dict):
                raise BadServerAnswer(say("answer.card", field="halt"))
            reason = _field(halt, "reason", str)
            message = halt.get("message") or ""
            if not isinstance(message, str):
                raise BadServerAnswer(say("answer.card", field="halt.message"))
        return cls(stage=stage, halt_reason=reason, halt_message=message,
                   poll_seconds=poll_seconds(card.get("poll_after_ms")),
                   progress=_progress(card.get("progress")))


def _field(mapping: dict[str, Any], name: str, kind: type[T]) -> T:
    value = mapping.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadServerAnswer(say("answer.card", field=name))
    return value


def _progress(value: object) -> ServerProgress | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadServerAnswer(say("answer.card", field="progress"))
    fraction = _number(value.get("fraction"))
    if fraction is None:
        raise BadServerAnswer(say("answer.card", field="progress.fraction"))
    eta = _number(value.get("eta_seconds"))
    return ServerProgress(stage=_field(value, "stage", str), done=_field(value, "done", int),
                    total=_field(value, "total", int),
                    fraction=min(max(fraction, 0.0), 1.0) if math.isfinite(fraction) else 0.0,
                    eta_seconds=eta if eta is not None and math.isfinite(eta) and eta >= 0
                    else None)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def poll_seconds(value: object) -> float | None:
    """How long to wait before the next read of a card whose `poll_after_ms` is
    `value`: None when it is null (settled); within [0.5 s, 30 s] whatever it says;
    `BadServerAnswer` when it is not a number."""
    if value is None:
        return None
    number = _number(value)
    if number is None:
        raise BadServerAnswer(say("answer.card", field="poll_after_ms"))
    if math.isnan(number):
        return DEFAULT_POLL_SECONDS
    return min(max(number / 1000, POLL_MIN_SECONDS), POLL_MAX_SECONDS)


def retry_seconds(header: str | None, attempt: int) -> float:
    """The wait `Retry-After: header` asks for (seconds only; an HTTP date or nonsense
    falls back to doubling), within [0.5 s, 60 s]."""
    try:
        seconds = float(header or "")
    except ValueError:
        seconds = 2.0 ** attempt
    if math.isnan(seconds):
        seconds = 2.0 ** attempt
    return min(max(seconds, RETRY_MIN_SECONDS), RETRY_MAX_SECONDS)


def record_id(body: bytes) -> str:
    """The id of the record an upload made, from the 201's JSON: an id as the service
    makes them (a ULID) or `BadServerAnswer`. It goes into URLs, never into a file name."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BadServerAnswer(say("answer.no_id")) from None
    raw = answer.get("id") if isinstance(answer, dict) else None
    found = parse_id(raw) if isinstance(raw, str) else None
    if found is None:
        raise BadServerAnswer(say("answer.no_id"))
    return found


def error_message(body: bytes | None, reason: str) -> str:
    """The server's own words (`{"error": {"message"}}`), else its status line."""
    if body is not None:
        try:
            message = orjson.loads(body)["error"]["message"]
        except (orjson.JSONDecodeError, KeyError, TypeError, IndexError):
            message = None
        if isinstance(message, str):
            return message
    return reason


def origin(url: URL) -> tuple[str, str, int | None]:
    return (url.scheme.lower(), (url.host or "").lower().rstrip("."), url.port)


def redirect_target(current: URL, location: str | None, server: URL) -> URL:
    """Where a redirect from `current` leads, if it stays within `server`'s origin
    (scheme, host and port); `BadServerAnswer` otherwise, so nothing (the token least of all)
    is sent anywhere else."""
    if not location:
        raise BadServerAnswer(say("answer.redirect_nowhere"))
    try:
        target = current.join(URL(location))
    except ValueError:
        raise BadServerAnswer(say("answer.redirect_nowhere")) from None
    if origin(target) != origin(server):
        scheme, host, port = origin(target)
        raise BadServerAnswer(say("answer.redirect_elsewhere", origin=f"{scheme}://{host}:{port}"))
    return target


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine: `localhost` (RFC 6761 keeps it here) or a
    loopback address."""
    name = host.lower().rstrip(".").strip("[]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def clear_text_host(server: str, token: str | None) -> str | None:
    """The host a token would cross the network to in clear text (plain `http://` to
    another machine), or None when it would not."""
    url = URL(server)
    if token is None or url.scheme != "http" or is_loopback(url.host or ""):
        return None
    return url.host or ""
