"""The Wyoming server: a TCP socket, the peers it serves, one named task per client.

The protocol has no authentication, so who may talk is decided by address alone:
`wyoming.allowed` (loopback by default), checked before a byte is read; a peer
outside it gets one `error` event (`not-allowed`) and the connection closes. At most
`max_clients` are served at once (more are answered `busy`); a client silent for
`idle_seconds` is let go. Events are read here rather than with the package's reader,
which buffers whatever length a header claims: a header line, its data and its payload
each have a bound (a chunk of audio is a few kB; `MAX_PAYLOAD_BYTES` is generous).

`run(stopping)` is the supervised actor (`service.voice`): it binds (a failure to bind
ends it, and the service stops loudly), announces itself by mDNS with `wyoming.zeroconf`
(`announce`), serves until `stopping`, then withdraws the announcement, closes the
socket and cancels the clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress

import orjson
import structlog
from wyoming.error import Error
from wyoming.event import Event, async_write_event

from transcriber.core.errors import TranscriberError
from transcriber.core.observability import WYOMING_REQUESTS
from transcriber.ports import Recognizer, RecognizesSamples
from transcriber.settings import WyomingSettings
from transcriber.voice.session import Archive, Refused, Session, info_event

log = structlog.get_logger(__name__)

MAX_HEADER_BYTES = 64 * 1024
MAX_DATA_BYTES = 64 * 1024
MAX_PAYLOAD_BYTES = 1024 * 1024


async def read_event(reader: asyncio.StreamReader) -> Event | None:
    """The next event, or None when the client closed; a malformed or oversized one
    is `Refused`. The reader's limit (`MAX_HEADER_BYTES`) bounds the header line."""
    try:
        line = await reader.readline()
    except ValueError:  # the line passed the reader's limit
        raise Refused("malformed", "event header too long") from None
    if not line:
        return None
    try:
        header = orjson.loads(line)
        kind = header["type"]
        data = header.get("data") or {}
        data_length = int(header.get("data_length") or 0)
        payload_length = int(header.get("payload_length") or 0)
        if not isinstance(kind, str) or not isinstance(data, dict):
            raise TypeError(kind)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        raise Refused("malformed", "event header is not a Wyoming event") from None
    if not 0 <= data_length <= MAX_DATA_BYTES or not 0 <= payload_length <= MAX_PAYLOAD_BYTES:
        raise Refused("malformed", "event data or payload too long")
    try:
        if data_length:
            extra = orjson.loads(await reader.readexactly(data_length))
            if not isinstance(extra, dict):
                raise TypeError("data")
            data.update(extra)
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError:
        return None
    except (orjson.JSONDecodeError, TypeError):
        raise Refused("malformed", "event data is not a JSON object") from None
    return Event(type=kind, data=data, payload=payload)


def allowed(peer: object, networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...],
            ) -> bool:
    """Pure: whether a socket's peer name (`(host, port, ...)`) is in `networks`; an
    IPv4 peer on an IPv6 socket (`::ffff:a.b.c.d`) is judged by its IPv4 address."""
    if not isinstance(peer, tuple) or not peer or not isinstance(peer[0], str):
        return False
    try:
        address = ipaddress.ip_address(peer[0].split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


async def _tell(writer: asyncio.StreamWriter, refusal: Refused) -> None:
    """The `error` event of a refusal, if the client still listens."""
    with contextlib.suppress(ConnectionError, RuntimeError):
        await async_write_event(Error(text=refusal.text, code=refusal.code).event(), writer)


class WyomingServer:
    """Serves voice commands with `recognizer` (through `RecognizesSamples`)."""

    def __init__(self, settings: WyomingSettings, *, recognizer: Recognizer,
                 version: str, archive: Archive | None = None) -> None:
        self._settings = settings
        # With `wyoming.archive`: each transcribed command kept, after its answer is sent.
        self._archive = archive
        self._recognizer = recognizer if isinstance(recognizer, RecognizesSamples) else None
        self._capabilities = recognizer.capabilities
        self._info = info_event(self._capabilities, version=version)
        self._clients: set[asyncio.Task[None]] = set()
        # The port bound (a test asks for 0 and reads it here).
        self.bound: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def run(self, stopping: asyncio.Event) -> None:
        server = await asyncio.start_server(self._accept, self._settings.host,
                                            self._settings.port, limit=MAX_HEADER_BYTES)
        port = int(server.sockets[0].getsockname()[1])
        self.bound.set_result(port)
        log.info("wyoming_listening", port=port,
                 voice_commands=self._recognizer is not None)
        try:
            async with server, self._announced(port):
                await stopping.wait()
        finally:
            server.close()
            for task in list(self._clients):
                task.cancel()
            await asyncio.gather(*self._clients, return_exceptions=True)

    def _announced(self, port: int) -> contextlib.AbstractAsyncContextManager[object]:
        """`wyoming.zeroconf`: the server announced on the LAN while it serves."""
        if not self._settings.zeroconf:
            return contextlib.nullcontext()
        from transcriber.voice.announce import announced  # noqa: PLC0415 - only when on
        return announced(self._settings, port)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback: the client's task is made here, named and kept.
        task = asyncio.create_task(self._client(reader, writer), name="wyoming-client")
        self._clients.add(task)
        task.add_done_callback(self._clients.discard)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      ) -> None:
        try:
            if not allowed(writer.get_extra_info("peername"), self._settings.allowed):
                raise Refused("not-allowed", "this address may not use the Wyoming server")
            # This task is already counted in `_clients`.
            if len(self._clients) > self._settings.max_clients:
                raise Refused("busy", "too many Wyoming clients at once; try again")
            await self._serve(reader, writer)
        except Refused as refusal:
            WYOMING_REQUESTS.labels(refusal.code.replace("-", "_")).inc()
            log.warning("wyoming_refused", code=refusal.code)
            await _tell(writer, refusal)
        except (ConnectionError, TimeoutError):
            pass  # the client went away or fell silent: nothing to answer
        except Exception as exc:
            # One client's fault (a bug, a recognizer's unexpected error) ends that client,
            # answered an error and logged loudly, never the server.
            WYOMING_REQUESTS.labels("failed").inc()
            log.error("wyoming_client_failed", error=type(exc).__name__)
            await _tell(writer, Refused("failed", "the voice command could not be served"))
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session = Session(recognizer=self._recognizer, capabilities=self._capabilities,
                          info=self._info, max_audio_seconds=self._settings.max_audio_seconds)
        while True:
            async with asyncio.timeout(self._settings.idle_seconds):
                event = await read_event(reader)
            if event is None:
                return
            for answer in await session.answer(event):
                await async_write_event(answer, writer)
            if session.transcribed is not None:
                kept, session.transcribed = session.transcribed, None
                if self._archive is not None:
                    await self._keep(self._archive, *kept)

    async def _keep(self, archive: Archive, pcm: bytes, language: str | None) -> None:
        """Archive one answered command; a failure is counted and logged, never the
        client's (it has its transcript)."""
        try:
            await archive(pcm, language)
        except (TranscriberError, OSError) as exc:
            WYOMING_REQUESTS.labels("archive_failed").inc()
            log.error("wyoming_archive_failed", error=type(exc).__name__)
        else:
            WYOMING_REQUESTS.labels("archived").inc()
