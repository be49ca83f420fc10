"""Webhooks' pure rules: the events, which URLs and addresses a delivery may go
to, and what a delivery's answer means (delivered, tried again later, given up).

The address rule is the SSRF guard (docs/api.md "Webhooks"): a webhook may
only reach the public internet unless `webhooks.allow_private_targets` lets
it reach this machine and its networks too. Some addresses are never a
receiver, whatever the setting: the clouds' metadata services (they hand out
credentials to whoever asks from inside), multicast, unspecified (`0.0.0.0`
connects to this machine on Linux) and reserved ranges. An IPv6 address that
carries an IPv4 one (mapped, 6to4, Teredo, NAT64) is judged by the IPv4
address it leads to.

The signature of a webhook delivery: `X-Transcriber-Signature: t=<unix seconds>,
v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the webhook's secret>`.

`sign` is what the delivery actor sends; `verify_signature` is what a
receiver runs, and docs/api.md shows exactly its code (the test of the doc
runs the example from the doc). The time in the signed text lets a receiver
refuse an old delivery replayed by someone who recorded it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time
from dataclasses import dataclass
from typing import Literal

from yarl import URL

from transcriber.core.errors import TranscriberError

Event = Literal["record.done", "record.halted", "record.deleted"]
EVENTS: tuple[Event, ...] = ("record.done", "record.halted", "record.deleted")
URL_MAX = 2048
SCHEMES = frozenset({"http", "https"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
TargetRefusalReason = Literal["bad_url", "scheme", "unresolvable", "private", "metadata",
                        "multicast", "unspecified", "reserved"]

# Cloud metadata services: AWS, GCP, Azure, OpenStack (169.254.169.254 and
# its IPv6 twin), ECS task metadata, Alibaba, Azure's WireServer (a public
# address), Oracle. Refused even with `allow_private_targets`.
METADATA: frozenset[IPAddress] = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254", "169.254.170.2", "169.254.170.23",
    "100.100.100.200", "168.63.129.16", "192.0.0.192",
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

_MESSAGES: dict[TargetRefusalReason, str] = {
    "bad_url": "url must be an absolute http:// or https:// URL with a host",
    "scheme": "url must use http or https",
    "unresolvable": "the url's host does not resolve",
    "private": "the url leads to a loopback, private or link-local address "
               "(webhooks.allow_private_targets is off)",
    "metadata": "the url leads to a cloud metadata address",
    "multicast": "the url leads to a multicast address",
    "unspecified": "the url leads to an unspecified address",
    "reserved": "the url leads to a reserved address",
}


class TargetRefused(TranscriberError):
    """A webhook's URL, or an address its host resolves to, may not be sent to.

    The message is ours (never the URL): it is shown to the person registering."""

    def __init__(self, reason: TargetRefusalReason) -> None:
        super().__init__(_MESSAGES[reason])
        self.reason: TargetRefusalReason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A webhook URL as parsed: its host (IDNA-encoded), port and, for a
    literal address, the address itself (no name to resolve)."""

    host: str
    port: int
    address: IPAddress | None


def parse_target(url: str) -> Target:
    """The target of an http(s) URL, or `TargetRefused` (`bad_url`, `scheme`)."""
    if len(url) > URL_MAX or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise TargetRefused("bad_url")
    try:
        parsed = URL(url)
        host, port = parsed.raw_host, parsed.port
    except (ValueError, UnicodeError):
        raise TargetRefused("bad_url") from None
    if parsed.scheme not in SCHEMES:
        raise TargetRefused("scheme" if parsed.scheme else "bad_url")
    if not parsed.absolute or not host or port is None or not 0 < port < 65536:
        raise TargetRefused("bad_url")
    try:
        address: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    return Target(host=host, port=port, address=address)


MASK = "…"


def masked_url(url: str) -> str:
    """What a `read` token sees of a webhook's URL: the scheme, host and port.

    Webhook URLs often carry the receiver's secret — in the query
    (`?token=`), the userinfo, or the path itself (Slack and Discord hooks are
    `/services/T…/B…/<secret>`) — so everything after the host is one `…`."""
    try:
        parsed = URL(url)
        origin = str(parsed.origin())
    except (ValueError, UnicodeError):
        return MASK
    rest = url.split("://", 1)[-1].partition("/")[2]
    has_more = bool(rest) or parsed.user is not None or bool(parsed.query_string)
    return origin + ("/" + MASK if has_more else "")


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address, where the packets end up
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_refusal(address: IPAddress, *, allow_private: bool) -> TargetRefusalReason | None:
    """Why a delivery may not connect to `address`; None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        if carried is not None:
            return address_refusal(carried, allow_private=allow_private)
    if address in METADATA:
        return "metadata"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if address.is_reserved and not address.is_loopback:  # ::1 is inside ::/8
        return "reserved"
    # fec0::/10 (IPv6 site-local, deprecated but routed on some networks) is not
    # `is_private` in Python's table, yet it is as internal as 10/8.
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    if (not address.is_global or site_local) and not allow_private:
        return "private"
    return None


def check_address(address: IPAddress, *, allow_private: bool) -> None:
    refusal = address_refusal(address, allow_private=allow_private)
    if refusal is not None:
        raise TargetRefused(refusal)


# --- what an answer means ----------------------------------------------------------

DeliveryOutcome = Literal["delivered", "retry", "failed", "gone"]


def answered(status: int | None) -> DeliveryOutcome:
    """What an attempt that got `status` (None: no answer at all) means: a 2xx
    delivers, a 410 gives the webhook up; anything else (3xx: redirects are not
    followed) is tried again — when, and when it has `failed` instead, is the
    follow-ups' one retry rule (`transcriber.followups.retry`)."""
    if status is not None and 200 <= status < 300:
        return "delivered"
    if status == 410:
        return "gone"
    return "retry"


# --- the signature -----------------------------------------------------------------

SIGNATURE_HEADER = "X-Transcriber-Signature"
EVENT_HEADER = "X-Transcriber-Event"
DELIVERY_HEADER = "X-Transcriber-Delivery"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The header's value for `body` sent at `timestamp` (Unix seconds)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp}, v1={mac.hexdigest()}"


# --- the receiver's side: docs/api.md shows this function as it is -------------------
def verify_signature(secret: str, header: str, body: bytes, *,
                     tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """True when `header` (X-Transcriber-Signature) signs `body` (the raw bytes
    received) with `secret`, made within `tolerance_seconds` of now."""
    fields = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields[name] = value
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_seconds:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body,
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))
