"""The signature of a webhook delivery: `X-Transcriber-Signature: t=<unix seconds>,
v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the webhook's secret>`.

`sign` is what the delivery actor sends; `verify_signature` is what a
receiver runs, and docs/api.md shows exactly its code (the test of the doc
runs the example from the doc). The time in the signed text lets a receiver
refuse an old delivery replayed by someone who recorded it.
"""

from __future__ import annotations

import hashlib
import hmac
import time

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
