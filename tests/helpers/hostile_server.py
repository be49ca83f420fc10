"""A hostile transcriber server on loopback, for the command-line client's tests.

Real HTTP (aiohttp's server on a free port): by default it behaves (an upload
gets a record, the card says done, the transcript is a line); each test swaps
in the answers of an attack (`server.upload`, `server.card`,
`server.transcript`) and counts what the client sent (`server.seen`, with the
`Authorization` each request carried). `run_cli` runs the real `transcriber`
command as a child process and reports its exit code, output and peak memory.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Two record ids as the service makes them (ULIDs).
RECORD_IDS = ("01j0000000000000000000000a", "01j0000000000000000000000b",
              "01j0000000000000000000000c")
TRANSCRIPT = "He was not an ill disposed\nyoung man.\n"
CHILD_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str
    authorization: str | None
    body_bytes: int


@dataclass
class HostileServer:
    base: str = ""
    seen: list[Seen] = field(default_factory=list)
    record_ids: list[str] = field(default_factory=lambda: list(RECORD_IDS))
    upload: Handler | None = None
    card: Handler | None = None
    transcript: Handler | None = None
    sent_bytes: int = 0  # by `stream_transcript`, until the client hung up
    read_uploads: bool = True  # False: an upload's body is left unread (a stalled upload)

    def count(self, method: str, ending: str = "") -> int:
        return sum(1 for seen in self.seen
                   if seen.method == method and seen.path.endswith(ending))

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        body = (await request.read() if request.method == "POST" and self.read_uploads
                else b"")
        self.seen.append(Seen(request.method, request.path,
                              request.headers.get("Authorization"), len(body)))
        if request.method == "POST":
            return await (self.upload or self._created)(request)
        if request.path.endswith("/transcript"):
            return await (self.transcript or _transcript)(request)
        return await (self.card or _done_card)(request)

    async def _created(self, request: web.Request) -> web.StreamResponse:
        del request
        return web.json_response({"id": self.record_ids[(self.count("POST") - 1)
                                                        % len(self.record_ids)]},
                                 status=201)

    async def stream_transcript(self, request: web.Request, *, total: int,
                                declared: bool) -> web.StreamResponse:
        """`total` bytes of transcript, generated 1 MiB at a time (never held), with or
        without a Content-Length."""
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        if declared:
            response.content_length = total
        await response.prepare(request)
        line = b"a" * 1023 + b"\n"
        block = line * 1024
        try:
            while self.sent_bytes < total:
                await response.write(block)
                self.sent_bytes += len(block)
        except (ConnectionResetError, asyncio.CancelledError):
            return response
        await response.write_eof()
        return response


async def _done_card(request: web.Request) -> web.StreamResponse:
    del request
    return web.json_response(card())


async def _transcript(request: web.Request) -> web.StreamResponse:
    del request
    return web.Response(text=TRANSCRIPT)


def card(*, stage: str = "done", halt: object = None, poll_after_ms: object = None,
         progress: object = None) -> dict[str, object]:
    return {"stage": stage, "halt": halt, "poll_after_ms": poll_after_ms,
            "progress": progress}


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"code": "x", "message": message}}, status=status)


async def trickle(request: web.Request, *, head_first: bool = True) -> web.StreamResponse:
    """One byte a second, for up to two minutes (the client must give up long before)."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.content_length = 120
    if head_first:
        await response.prepare(request)
    for _ in range(120):
        await asyncio.sleep(1)
        if not head_first:
            continue
        await response.write(b" ")
    return response


@asynccontextmanager
async def hostile_server(host: str = "127.0.0.1") -> AsyncIterator[HostileServer]:
    server = HostileServer()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server._dispatch)
    # Cancelled handlers: a trickle ends when the client hangs up, and at the end.
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.1,
                           access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = runner.addresses[0][1]
    server.base = f"http://{host}:{port}"
    try:
        yield server
    finally:
        await runner.cleanup()


def outside_address() -> str | None:
    """An address of this machine that is not loopback (the one its default route
    leaves by), or None where there is none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # TEST-NET-3; a UDP connect sends nothing
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@dataclass(frozen=True, slots=True)
class CliRun:
    code: int
    out: str
    err: str
    max_rss_kib: int


_MEASURED = (
    "import resource, runpy, sys\n"
    "code = 0\n"
    "try:\n"
    "    runpy.run_module('transcriber.cli', run_name='__main__')\n"
    "except SystemExit as stop:\n"
    "    code = stop.code\n"
    "sys.stderr.flush()\n"
    "print(f'\\nMAXRSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}',"
    " file=sys.stderr)\n"
    "sys.exit(code)\n"
)


async def run_cli(*args: str, data_dir: Path, token: str | None = "tx_secret") -> CliRun:
    """`transcriber ARGS…` in a child process (its own interpreter: a traceback shows
    on its stderr as it would on a terminal), English, the token from the variable."""
    env = {**os.environ, "LANG": "C.UTF-8", "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)}
    for name in ("LC_ALL", "LC_MESSAGES", "TRANSCRIBER_SERVER_URL", "TRANSCRIBER_TOKEN"):
        env.pop(name, None)
    if token is not None:
        env["TRANSCRIBER_TOKEN"] = token
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _MEASURED, *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    # A bound for the test itself: a client that hangs would otherwise hang it.
    out, err = await asyncio.wait_for(child.communicate(), CHILD_SECONDS)
    text = err.decode("utf-8", errors="replace")
    text, _, rss = text.rpartition("\nMAXRSS ")
    assert child.returncode is not None
    return CliRun(code=child.returncode, out=out.decode("utf-8", errors="replace"),
                  err=text, max_rss_kib=int(rss.strip() or 0))
