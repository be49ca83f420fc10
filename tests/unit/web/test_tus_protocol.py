"""The tus 1.0 headers' rules (transcriber.domain.uploads), with no server."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime

import pytest

from transcriber.domain.uploads import (
    UploadHeaderError,
    http_date,
    parse_checksum,
    parse_count,
    parse_metadata,
)


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("12", 12), (" 7 ", 7),
                                             (str(2**63 - 1), 2**63 - 1)])
def test_counts_are_plain_digits(text: str, value: int) -> None:
    assert parse_count(text, name="Upload-Length") == value


@pytest.mark.parametrize("text", [None, "", "-1", "+1", "1.0", "1e3", "0x10", "١٢",
                                  "1 2", str(2**63), "9" * 20])
def test_anything_else_is_refused(text: str | None) -> None:
    with pytest.raises(UploadHeaderError):
        parse_count(text, name="Upload-Offset")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_metadata_pairs_decode_and_a_bare_key_is_empty() -> None:
    header = f"filename {_b64('встреча.ogg')},language {_b64('ru')},is_confidential"
    assert parse_metadata(header) == {"filename": "встреча.ogg", "language": "ru",
                                      "is_confidential": ""}
    assert parse_metadata(None) == {}
    assert parse_metadata("  ") == {}


@pytest.mark.parametrize("header", [
    "filename not-base64!", "a b c", "filename YQ==,filename Yg==", ",", "key\tYQ==",
    "x " + "A" * 5000])
def test_malformed_metadata_is_refused(header: str) -> None:
    with pytest.raises(UploadHeaderError):
        parse_metadata(header)


def test_checksums_name_an_offered_algorithm_and_a_digest_of_its_size() -> None:
    digest = hashlib.sha1(b"abc", usedforsecurity=False).digest()
    checksum = parse_checksum(f"sha1 {base64.b64encode(digest).decode()}")
    assert checksum is not None
    assert checksum.algorithm == "sha1"
    hasher = checksum.new_hash()
    hasher.update(b"abc")
    assert hasher.digest() == checksum.digest
    assert parse_checksum(None) is None
    md5 = base64.b64encode(hashlib.md5(b"", usedforsecurity=False).digest()).decode()
    assert parse_checksum(f"MD5 {md5}") is not None


@pytest.mark.parametrize("header", ["sha1", "crc32 AAAA", "sha1 ***", "sha1 AAAA",
                                    "sha1 a b"])
def test_bad_checksums_are_refused(header: str) -> None:
    with pytest.raises(UploadHeaderError):
        parse_checksum(header)


def test_expiry_is_an_http_date() -> None:
    assert http_date(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == \
        "Fri, 02 Jan 2026 03:04:05 GMT"
