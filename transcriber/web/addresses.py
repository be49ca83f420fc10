"""Who is asking: the peer, and the client behind trusted proxies.

Pure functions over the peer address, the `X-Forwarded-For` values and the
trusted networks (`[server] trusted_proxies`). The chain is read from the
right: each trusted hop vouches for the address on its left, so the first
untrusted address is the client. Entries left of it were written by the
client itself and are never believed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from transcriber.settings import Network

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

UNKNOWN_PEER = "unknown"


def parse_address(text: str | None) -> Address | None:
    if not text:
        return None
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "10.0.0.1:443"
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_trusted(address: Address | None, trusted: Sequence[Network]) -> bool:
    return address is not None and any(address in network for network in trusted)


def forwarded_chain(values: Iterable[str]) -> list[str]:
    """All `X-Forwarded-For` entries, in order, across repeated headers."""
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> Address | None:
    """The client's address; `forwarded_for` counts only when the peer is trusted."""
    current = parse_address(peer)
    if not is_trusted(current, trusted):
        return current
    for entry in reversed(forwarded_for):
        hop = parse_address(entry)
        if hop is None:
            # A trusted proxy wrote garbage: believe nothing further left.
            return current
        current = hop
        if not is_trusted(hop, trusted):
            return hop
    return current


def bucket_key(address: Address | None) -> str:
    """One rate bucket per IPv4 address and per IPv6 /64 (one host's usual share)."""
    if address is None:
        return UNKNOWN_PEER
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
