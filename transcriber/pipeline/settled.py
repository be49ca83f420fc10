"""In-process news that a record has settled: it reached `done`, or it halted.

The step actors say so right after the write that settled it has landed
(`StepActor`); whoever waits for a record in this process (the OpenAI door,
`transcriber.web.openai_api`) wakes at once instead of polling the database
in a tight loop. It is a hint, never the truth: a waiter reads the record's
stage through the readers after each wake, and still looks now and then
without one, because a record may settle where no actor of this process
says so (the claim's stuck sweep, another process, a deletion).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator


class SettledRecords:
    """Waiters by record id; a record's news wakes every waiter of that record."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Event]] = {}

    @property
    def watched(self) -> int:
        return len(self._waiting)

    def settled(self, record_id: str) -> None:
        for event in self._waiting.get(record_id, ()):
            event.set()

    @contextlib.contextmanager
    def watch(self, record_id: str) -> Iterator[asyncio.Event]:
        """An event set when `record_id` settles (clear it to wait again); the
        waiter is forgotten when the block ends, however it ends."""
        event = asyncio.Event()
        self._waiting.setdefault(record_id, set()).add(event)
        try:
            yield event
        finally:
            waiters = self._waiting.get(record_id)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    del self._waiting[record_id]
