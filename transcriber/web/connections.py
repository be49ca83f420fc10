"""How connections are served, and descriptor exhaustion as one structured event.

`connection_options` are aiohttp's server options for the service (`serve`
and the tests' servers): aiohttp closes a connection still waiting for a
request head when its keep-alive timer fires, from the moment it opens, so
that timer is the header-read timeout (it also ends idle keep-alive
connections); a request body is never inflated (a coded body is refused by
the routes that read one, `uploadguard.refuse_coded`, and discarded by the
others); a client that hangs up does not cancel its handler, which meets
the hang-up as `ConnectionResetError` from the body and ends cleanly.

When the process runs out of descriptors, asyncio's accept loop reports each
failed `accept()` to the loop's exception handler, whose default prints a
traceback every time. `AcceptFailureLog` turns those into one
`accept_failed` event per `interval` seconds carrying how many were folded
into it. asyncio retries accepting a second later; when the listening socket
has closed meanwhile (a SIGTERM right after the exhaustion) that retry fails
on the closed socket with a traceback, which is dropped (a debug event):
there is nothing left to accept. Every other context goes to asyncio's
default handler unchanged.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable
from typing import Any

import structlog

from transcriber.settings import ServerSettings

log = structlog.get_logger(__name__)

RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
LOG_INTERVAL_SECONDS = 60.0
# The callback asyncio's selector loop schedules to accept again after EMFILE.
_ACCEPT_RETRY = "BaseSelectorEventLoop._start_serving("


def connection_options(settings: ServerSettings) -> dict[str, Any]:
    return {"keepalive_timeout": settings.header_read_timeout_seconds,
            "auto_decompress": False, "handler_cancellation": False}


class AcceptFailureLog:
    def __init__(self, clock: Callable[[], float],
                 interval: float = LOG_INTERVAL_SECONDS) -> None:
        self._clock = clock
        self._interval = interval
        self._last: float | None = None
        self._folded = 0

    def should_log(self) -> tuple[bool, int]:
        """Pure bookkeeping: log now? and how many failures since the last event."""
        now = self._clock()
        self._folded += 1
        if self._last is not None and now - self._last < self._interval:
            return False, 0
        self._last = now
        count, self._folded = self._folded, 0
        return True, count

    def handle(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, ValueError | OSError) and _ACCEPT_RETRY in str(
                context.get("message", "")):
            log.debug("accept_retry_after_close", error=type(exc).__name__)
            return
        if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
            emit, count = self.should_log()
            if emit:
                log.error("accept_failed", error=errno.errorcode.get(exc.errno or 0, "OSError"),
                          failures=count, next_report_seconds=self._interval)
            return
        loop.default_exception_handler(context)


def install_accept_failure_log(loop: asyncio.AbstractEventLoop) -> AcceptFailureLog:
    handler = AcceptFailureLog(loop.time)
    loop.set_exception_handler(handler.handle)
    return handler
