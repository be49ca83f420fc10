"""Personal access tokens, the pure part: their text, hash, bearer header and scope."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime

import pytest

from transcriber.domain import tokens


def test_a_new_token_carries_256_random_bits_and_is_stored_as_its_sha256() -> None:
    made = {tokens.new_token() for _ in range(200)}
    assert len({m.text for m in made}) == 200
    for m in made:
        assert m.text.startswith("tx_")
        assert tokens.well_formed(m.text)
        raw = base64.urlsafe_b64decode(m.text[3:] + "=")
        assert len(raw) * 8 == 256
        assert m.hash == hashlib.sha256(m.text.encode()).hexdigest()
        assert m.text not in m.hash


@pytest.mark.parametrize("text", ["", "tx_", "tx_" + "A" * 42, "tx_" + "A" * 44,
                                  "TX_" + "A" * 43, "tx_" + "A" * 42 + "=", "tx_" + "é" * 43])
def test_only_the_shape_this_service_makes_is_well_formed(text: str) -> None:
    assert not tokens.well_formed(text)


def test_hashes_compare_in_constant_time_and_exactly() -> None:
    digest = tokens.token_hash("tx_" + "A" * 43)
    assert tokens.same_hash(digest, digest)
    assert not tokens.same_hash(digest, tokens.token_hash("tx_" + "B" * 43))


@pytest.mark.parametrize(("headers", "expected"), [
    ([], None),
    (["Basic YWxpY2U6eA=="], None),  # a proxy's own scheme: not ours
    (["Bearer tx_abc"], "tx_abc"),
    (["bearer   tx_abc  "], "tx_abc"),
    (["Bearer\ttx_abc"], "tx_abc"),  # any whitespace ends the scheme, as a proxy reads it
    (["Bearer"], ""),  # an attempt without credentials: refused, never ignored
    (["Bearer tx_a", "Bearer tx_b"], ""),
    (["Basic eDp5", "Bearer tx_b"], ""),
])
def test_bearer_credentials(headers: list[str], expected: str | None) -> None:
    assert tokens.bearer_credentials(headers) == expected


def test_a_read_token_only_reads() -> None:
    assert tokens.scope_allows("read", "GET")
    assert tokens.scope_allows("read", "head")
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert not tokens.scope_allows("read", method)
        assert tokens.scope_allows("write", method)


def test_names_and_expiry() -> None:
    assert tokens.name_problem("phone shortcut") is None
    assert tokens.name_problem("x" * 101) == "is longer than 100 characters"
    assert tokens.name_problem("a\u202eb") is not None
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert tokens.expires_at(now, None) is None
    assert tokens.expires_at(now, 30) == "2026-01-31T12:00:00Z"
    with pytest.raises(ValueError, match="expires_days"):
        tokens.expires_at(now, 0)
