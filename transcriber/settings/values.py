"""The settings' own value types: a secret that never shows, a network of addresses."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Secret:
    """A value that never appears in logs, reprs or error messages."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret(***)"

    def __str__(self) -> str:
        return "***"


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
