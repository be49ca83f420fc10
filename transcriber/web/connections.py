"""Descriptor exhaustion: one structured event, not a traceback per refused accept.

When the process runs out of descriptors, asyncio's accept loop reports each
failed `accept()` to the loop's exception handler, whose default prints a
traceback every time. `AcceptFailureLog` turns those into one
`accept_failed` event per `interval` seconds carrying how many were folded
into it; every other context goes to asyncio's default handler unchanged.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)

RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
LOG_INTERVAL_SECONDS = 60.0


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
