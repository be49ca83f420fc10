"""Client addresses behind trusted proxies, read from the right."""

from __future__ import annotations

import ipaddress

import pytest

from transcriber.web.addresses import bucket_key, client_address, forwarded_chain, parse_address

TRUSTED = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("10.0.0.0/8"),
           ipaddress.ip_network("::1/128"))


def _client(peer: str, *xff: str) -> str:
    return str(client_address(peer, forwarded_chain(xff), TRUSTED))


def test_untrusted_peer_is_the_client_whatever_it_forwards() -> None:
    assert _client("203.0.113.9", "198.51.100.1") == "203.0.113.9"


def test_trusted_peer_without_chain_is_the_client() -> None:
    assert _client("127.0.0.1") == "127.0.0.1"


def test_chain_is_read_from_the_right_skipping_trusted_hops() -> None:
    # The client forged "1.1.1.1"; the edge proxy appended the real 198.51.100.7,
    # an inner proxy appended 10.0.0.5.
    assert _client("127.0.0.1", "1.1.1.1, 198.51.100.7, 10.0.0.5") == "198.51.100.7"


def test_repeated_headers_form_one_chain() -> None:
    assert _client("127.0.0.1", "1.1.1.1", "198.51.100.7") == "198.51.100.7"


def test_all_trusted_chain_gives_the_leftmost() -> None:
    assert _client("127.0.0.1", "10.0.0.1, 10.0.0.2") == "10.0.0.1"


def test_garbage_entry_stops_the_walk() -> None:
    assert _client("127.0.0.1", "198.51.100.7, not-an-ip") == "127.0.0.1"
    assert _client("127.0.0.1", "garbage, 10.0.0.3") == "10.0.0.3"


@pytest.mark.parametrize(("text", "expected"), [
    ("198.51.100.7:443", "198.51.100.7"),
    ("[2001:db8::1]:443", "2001:db8::1"),
    ("2001:db8::1", "2001:db8::1"),
    ("::ffff:198.51.100.7", "198.51.100.7"),
    ("", None),
    ("unknown", None),
])
def test_parse_address(text: str, expected: str | None) -> None:
    parsed = parse_address(text)
    assert (None if parsed is None else str(parsed)) == expected


def test_ipv6_hosts_share_their_slash_64() -> None:
    a = bucket_key(parse_address("2001:db8:1:2::1"))
    b = bucket_key(parse_address("2001:db8:1:2:ffff::9"))
    c = bucket_key(parse_address("2001:db8:1:3::1"))
    assert a == b != c
    assert bucket_key(parse_address("198.51.100.7")) == "198.51.100.7"
    assert bucket_key(None) == "unknown"
