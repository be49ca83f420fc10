"""The Wyoming server announced on the LAN by mDNS (`wyoming.zeroconf`, off by default).

Home Assistant's Wyoming integration discovers `_wyoming._tcp.local.` services
and offers to add each one it finds; the announcement is how it finds this
service without anyone typing an address. The instance is `wyoming.zeroconf_name`
(default `transcriber-<host name>`), at the port bound, at the address
`wyoming.host` names: a listening address announces itself, on that interface
only; the wildcard (`0.0.0.0`, `::`) announces the address the machine reaches
the LAN by, on every interface. Announcing tells nobody new they are allowed:
`wyoming.allowed` still decides who is served (docs/integrations.md).

Registered once the socket is bound, unregistered (a goodbye, so browsers drop it
at once) when the server stops. The package is the optional extra `zeroconf`: on
without it, the server does not start (`ConfigError`, the service stops loudly).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator
from typing import Any

import structlog

from transcriber.core.errors import ConfigError
from transcriber.settings import WyomingSettings

log = structlog.get_logger(__name__)

SERVICE_TYPE = "_wyoming._tcp.local."
# The mDNS group: a UDP socket "connected" to it names the LAN address (no packet goes).
_MDNS_GROUP = "224.0.0.251"


def instance_name(settings: WyomingSettings, hostname: str) -> str:
    """Pure: the announced instance's name (a DNS label: at most 63 bytes, no dot)."""
    name = settings.zeroconf_name or f"transcriber-{hostname.split('.', maxsplit=1)[0]}"
    return name.encode()[:63].decode(errors="ignore")


def _lan_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((_MDNS_GROUP, 1))
        return str(probe.getsockname()[0])


def announced_address(host: str) -> tuple[str, bool]:
    """The address announced and whether only its own interface announces it."""
    if ipaddress.ip_address(host).is_unspecified:
        return _lan_address(), False
    return host, True


@contextlib.asynccontextmanager
async def announced(settings: WyomingSettings, port: int) -> AsyncIterator[str]:
    """The server announced while inside; yields the instance's full name."""
    try:
        from zeroconf import InterfaceChoice, IPVersion  # noqa: PLC0415 - the optional extra
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf  # noqa: PLC0415
    except ImportError:
        raise ConfigError("wyoming.zeroconf", "needs the zeroconf package: "
                          "pip install 'transcriber[zeroconf]'") from None
    address, own_interface = announced_address(settings.host)
    packed = ipaddress.ip_address(address).packed
    v6 = len(packed) == 16
    interfaces: Any = [address] if own_interface else InterfaceChoice.All
    zc = AsyncZeroconf(interfaces=interfaces,
                       ip_version=IPVersion.V6Only if v6 else IPVersion.V4Only)
    name = instance_name(settings, socket.gethostname())
    info = AsyncServiceInfo(SERVICE_TYPE, f"{name}.{SERVICE_TYPE}", addresses=[packed],
                            port=port, server=f"{name}.local.")
    try:
        # The call answers a task that ends once the probes and announcements went out.
        await (await zc.async_register_service(info))
        log.info("wyoming_announced", port=port)
        try:
            yield info.name
        finally:
            await (await zc.async_unregister_service(info))  # the goodbye sent
            log.info("wyoming_announcement_withdrawn")
    finally:
        await zc.async_close()
