"""Resumable uploads: the tus 1.0 protocol's rules, with no I/O (docs/api.md,
"Resumable uploads").

tus (https://tus.io/protocols/resumable-upload) is what tus-js-client, Uppy and
the `tuspy` package speak: `POST` declares the length and metadata, `HEAD`
tells how many bytes the server holds, `PATCH` appends at that offset, `DELETE`
ends it. The headers are parsed strictly here: a length or offset is digits
only (no sign, no spaces, no more than 19 of them: a 64-bit integer), metadata
is `key base64,key base64` with unique keys and a bounded size.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime

TUS_VERSION = "1.0.0"
EXTENSIONS = ("creation", "creation-defer-length", "termination", "expiration", "checksum")
# What `Upload-Checksum` may name; each is cheap next to writing the bytes.
CHECKSUM_ALGORITHMS = ("sha1", "md5", "sha256")
OFFSET_CONTENT_TYPE = "application/offset+octet-stream"
METADATA_MAX_CHARS = 4096
FILENAME_MAX_CHARS = 1024

_DIGITS = re.compile(r"[0-9]{1,19}")
_KEY = re.compile(r"[!-+\--~]+")  # printable ASCII without space and comma


class UploadHeaderError(ValueError):
    """A tus header that does not parse (the door answers 400)."""


def parse_count(text: str | None, *, name: str) -> int:
    """`Upload-Length` or `Upload-Offset`: a non-negative 64-bit integer in digits."""
    if text is None:
        raise UploadHeaderError(f"{name} is missing")
    value = text.strip()
    if not _DIGITS.fullmatch(value):
        raise UploadHeaderError(f"{name} must be a non-negative whole number")
    number = int(value)
    if number >= 2**63:
        raise UploadHeaderError(f"{name} is too large")
    return number


def parse_metadata(text: str | None) -> dict[str, str]:
    """`Upload-Metadata`: pairs `key base64(value)` separated by commas; a key alone
    has an empty value. Values are UTF-8 (undecodable bytes replaced)."""
    if text is None or not text.strip():
        return {}
    if len(text) > METADATA_MAX_CHARS:
        raise UploadHeaderError(f"Upload-Metadata is longer than {METADATA_MAX_CHARS} characters")
    pairs: dict[str, str] = {}
    for item in text.split(","):
        parts = item.strip().split(" ")
        if len(parts) > 2 or not _KEY.fullmatch(parts[0]):
            raise UploadHeaderError("Upload-Metadata is malformed")
        key = parts[0]
        if key in pairs:
            raise UploadHeaderError("Upload-Metadata names a key twice")
        try:
            raw = base64.b64decode(parts[1], validate=True) if len(parts) == 2 else b""
        except (binascii.Error, ValueError) as exc:
            raise UploadHeaderError("Upload-Metadata holds a value that is not base64") from exc
        pairs[key] = raw.decode("utf-8", errors="replace")
    return pairs


@dataclass(frozen=True, slots=True, kw_only=True)
class Checksum:
    """`Upload-Checksum`: what the PATCH's body must hash to."""

    algorithm: str
    digest: bytes

    def new_hash(self) -> hashlib._Hash:
        return hashlib.new(self.algorithm, usedforsecurity=False)


def parse_checksum(text: str | None) -> Checksum | None:
    """`Upload-Checksum: <algorithm> <base64 digest>`; None when absent. An algorithm
    not offered is `UnsupportedChecksum` (400 in tus); a malformed value 400 too."""
    if text is None:
        return None
    parts = text.strip().split(" ")
    if len(parts) != 2:
        raise UploadHeaderError("Upload-Checksum is malformed")
    algorithm = parts[0].lower()
    if algorithm not in CHECKSUM_ALGORITHMS:
        raise UploadHeaderError("Upload-Checksum names an algorithm not offered")
    try:
        digest = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UploadHeaderError("Upload-Checksum's digest is not base64") from exc
    if len(digest) != hashlib.new(algorithm, usedforsecurity=False).digest_size:
        raise UploadHeaderError("Upload-Checksum's digest has the wrong length")
    return Checksum(algorithm=algorithm, digest=digest)


def http_date(moment: datetime) -> str:
    """`Upload-Expires` is an RFC 9110 HTTP date."""
    return format_datetime(moment, usegmt=True)
