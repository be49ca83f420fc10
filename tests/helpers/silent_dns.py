"""A name server on 127.0.0.1 that never answers (until told to): the attacker's
name server of docs/hostile-input.md, which drops every query.

It reads each query and keeps it; `names` are the names asked for, so a test
waits for an event ("every lookup reached the server") instead of sleeping.
`release` answers every query kept, and every later one, NXDOMAIN: the
lookups end at once and a test ends without waiting out a deadline.
"""

from __future__ import annotations

import asyncio
import struct

LOOPBACK = "127.0.0.1"


def _question_end(query: bytes) -> int:
    """Where the (one) question of a DNS query ends: its labels, then type and class."""
    at = 12
    while at < len(query) and query[at] != 0:
        at += 1 + query[at]
    return at + 1 + 4


def question_name(query: bytes) -> str:
    labels, at = [], 12
    while at < len(query) and query[at] != 0:
        size = query[at]
        labels.append(query[at + 1: at + 1 + size].decode("ascii", "replace"))
        at += 1 + size
    return ".".join(labels).lower()


def nxdomain(query: bytes) -> bytes:
    """The answer "no such name" to `query`: its id and question, no records."""
    (ident, flags) = struct.unpack("!HH", query[:4])
    flags = 0x8000 | (flags & 0x0100) | 0x0080 | 3  # QR, RD copied, RA, NXDOMAIN
    return struct.pack("!HHHHHH", ident, flags, 1, 0, 0, 0) + query[12:_question_end(query)]


class SilentNameServer(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.queries = 0
        self.changed = asyncio.Event()
        self._kept: list[tuple[bytes, tuple[str, int]]] = []
        self._released = False
        self._transport: asyncio.DatagramTransport | None = None

    async def start(self) -> str:
        """Listen; answers the address to give a resolver ("127.0.0.1:PORT")."""
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(lambda: self,
                                                           local_addr=(LOOPBACK, 0))
        self._transport = transport
        port = transport.get_extra_info("sockname")[1]
        return f"{LOOPBACK}:{port}"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.DatagramTransport)
        self._transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if len(data) < 12:
            return
        self.queries += 1
        self.names.add(question_name(data))
        self.changed.set()
        if self._released:
            self._answer(data, addr)
        else:
            self._kept.append((data, addr))

    def _answer(self, data: bytes, addr: tuple[str, int]) -> None:
        if self._transport is not None:
            self._transport.sendto(nxdomain(data), addr)

    async def asked(self, names: set[str]) -> None:
        """Until every name of `names` has been asked for."""
        while not names <= self.names:
            self.changed.clear()
            await self.changed.wait()

    def release(self) -> None:
        self._released = True
        for data, addr in self._kept:
            self._answer(data, addr)
        self._kept.clear()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
